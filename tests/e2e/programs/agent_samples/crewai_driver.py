"""Run the CrewAI sample with a scripted LLM making the tool calls given as JSON (argv[1]), in
the CrewAI venv; print what the LLM read back for each call as JSON: a list of
``{"error": bool, "text": str}`` (a tool's dict result is given as JSON text)."""

import ast
import importlib.util
import json
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[4] / "examples" / "agents" / "crewai" / "agent.py"
spec = importlib.util.spec_from_file_location("agent_sample_crewai", SAMPLE)
assert spec is not None and spec.loader is not None
sample = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = sample  # pydantic resolves the module's annotations through it
spec.loader.exec_module(sample)

calls = [(name, arguments) for name, arguments in json.loads(sys.argv[1])]
llm = sample.ScriptedLLM(model="scripted", calls=list(calls))
with sample.sandboxed_tools.tool_sandboxes():
    answer = sample.make_crew(llm, "scripted").kickoff()
assert str(answer) == "done", answer  # the crew went on after errors
assert len(llm.observations) == len(calls), llm.observations
outcomes = []
for observation in llm.observations:
    try:
        value = ast.literal_eval(observation)
    except (ValueError, SyntaxError):
        value = None
    if isinstance(value, dict):
        outcomes.append({"error": False, "text": json.dumps(value)})
    else:
        outcomes.append({"error": True, "text": observation})
print(json.dumps(outcomes))
