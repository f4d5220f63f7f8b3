"""Agent-framework samples (issue 15): a sandboxed tool call against the same tool unsandboxed,
through each framework's own tool-calling API, in one run; target within x1.5.

The tool is the samples' ``fetch_webpage`` (``examples/agents/common/sandboxed_tools.py``: a
urllib GET of a 2 KB page from a local ``http.server`` run as a separate process), declared the
same way on both sides: once over the ``@sandbox`` function (its body in a landlock worker),
once over the plain function it wraps (``__wrapped__``, in the agent's process). Each framework
is timed as it calls a tool for a model:

- LangChain: ``tool.invoke(tool_call)`` (a ``ToolMessage`` back);
- LangGraph: a graph of one ``ToolNode`` invoked on an ``AIMessage`` with one tool call;
- Pydantic AI: ``Agent.run_sync`` with a ``FunctionModel`` that calls the tool once, then ends;
- OpenAI Agents SDK: ``Runner.run_sync`` with a scripted ``Model``, the same;
- smolagents: ``ToolCallingAgent.execute_tool_call`` (the agent's own tool-call path);
- Google ADK: a turn of ``InMemoryRunner`` with the sample's scripted ``BaseLlm`` (one
  function call, then the answer; the runner and session are made per call on both sides);
- AutoGen: ``FunctionTool.run_json`` (what ``AssistantAgent`` calls for a tool call);
- Agno: ``Agent.run`` with the sample's scripted ``Model`` (one tool call, then the answer);
- Strands Agents: ``agent.tool.fetch_webpage(...)``, Strands' direct tool call.

CrewAI (its own venv) is not measured here.

A framework that is not installed (``pip install -e .[agents]``) is reported as not run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from cases import PYTHON3

REPO = Path(__file__).resolve().parent.parent

PROGRAM = textwrap.dedent(
    """
    import json, os, socket, statistics, subprocess, sys, time
    from pathlib import Path

    REPO, WEBDIR, PYTHON3, N = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        PORT = probe.getsockname()[1]
    os.environ["AGENTS_WEB_PORT"] = str(PORT)
    os.environ["OS_SANDBOX"] = "landlock"
    server = subprocess.Popen(
        [PYTHON3, "-m", "http.server", "--bind", "127.0.0.1", "-d", WEBDIR, str(PORT)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    sys.path.insert(0, str(REPO / "examples" / "agents" / "common"))
    import sandboxed_tools

    URL = f"http://127.0.0.1:{PORT}/page.html"
    SANDBOXED = sandboxed_tools.fetch_webpage
    PLAIN = sandboxed_tools.fetch_webpage.__wrapped__
    for _ in range(100):
        try:
            PLAIN(URL)
            break
        except OSError:
            time.sleep(0.05)


    def langchain(fn):
        from langchain_core.tools import tool
        declared = tool(fn)
        call = {"name": "fetch_webpage", "args": {"url": URL}, "id": "1", "type": "tool_call"}
        return lambda: declared.invoke(call)


    def langgraph(fn):
        from langchain_core.messages import AIMessage
        from langgraph.graph import START, MessagesState, StateGraph
        from langgraph.prebuilt import ToolNode
        graph = StateGraph(MessagesState)
        graph.add_node("tools", ToolNode([fn]))
        graph.add_edge(START, "tools")
        compiled = graph.compile()
        call = {"name": "fetch_webpage", "args": {"url": URL}, "id": "1", "type": "tool_call"}
        state = {"messages": [AIMessage("", tool_calls=[call])]}
        return lambda: compiled.invoke(state)


    def pydantic_ai(fn):
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.models.function import FunctionModel

        def script(messages, info):
            if len(messages) == 1:
                return ModelResponse(parts=[ToolCallPart("fetch_webpage", {"url": URL})])
            return ModelResponse(parts=[TextPart("done")])

        agent = Agent(FunctionModel(script), tools=[fn])
        return lambda: agent.run_sync("go")


    def openai_agents(fn):
        from agents import Agent, ModelResponse, RunConfig, Runner, Usage, function_tool
        from agents.models.interface import Model
        from openai.types.responses import (
            ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText,
        )

        class Scripted(Model):
            async def get_response(self, system_instructions, input, *args, **kwargs):
                if not any(isinstance(i, dict) and i.get("type") == "function_call_output"
                           for i in (input if isinstance(input, list) else [])):
                    out = [ResponseFunctionToolCall(type="function_call", name="fetch_webpage",
                                                    arguments=json.dumps({"url": URL}),
                                                    call_id="1")]
                else:
                    text = ResponseOutputText(type="output_text", text="done", annotations=[])
                    out = [ResponseOutputMessage(id="m", type="message", role="assistant",
                                                 status="completed", content=[text])]
                return ModelResponse(output=out, usage=Usage(), response_id=None)

            def stream_response(self, *args, **kwargs):
                raise NotImplementedError

        agent = Agent(name="bench", tools=[function_tool(fn)])
        config = RunConfig(model=Scripted(), tracing_disabled=True)
        return lambda: Runner.run_sync(agent, "go", run_config=config)


    def load_sample(name):
        import importlib.util
        path = REPO / "examples" / "agents" / name / "agent.py"
        spec = importlib.util.spec_from_file_location(f"agent_sample_{name}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module


    def smolagents(fn):
        from smolagents import ToolCallingAgent, tool

        def fetch_webpage(url: str) -> dict:
            '''Fetch a web page.

            Args:
                url: the address of the page.
            '''
            return fn(url)

        sample = load_sample("smolagents")
        agent = ToolCallingAgent(tools=[tool(fetch_webpage)], model=sample.ScriptedModel([]),
                                 verbosity_level=-1)
        return lambda: agent.execute_tool_call("fetch_webpage", {"url": URL})


    def google_adk(fn):
        from google.adk.agents import LlmAgent
        sample = load_sample("google_adk")
        model = sample.ScriptedLlm(calls=[("fetch_webpage", {"url": URL})])
        agent = LlmAgent(name="bench", model=model, tools=[fn])
        return lambda: sample.run_agent(agent, "go")


    def autogen(fn):
        import asyncio
        from autogen_core import CancellationToken
        from autogen_core.tools import FunctionTool
        declared = FunctionTool(fn, description="Fetch a web page.", name="fetch_webpage")
        return lambda: asyncio.run(declared.run_json({"url": URL}, CancellationToken()))


    def agno(fn):
        from agno.agent import Agent
        sample = load_sample("agno")
        agent = Agent(model=sample.ScriptedModel([("fetch_webpage", {"url": URL})]),
                      tools=[fn], telemetry=False)
        return lambda: agent.run("go")


    def strands(fn):
        from strands import Agent, tool
        model = load_sample("strands").ScriptedModel([])
        agent = Agent(tools=[tool(fn)], callback_handler=None, model=model)
        return lambda: agent.tool.fetch_webpage(url=URL, record_direct_tool_call=False)


    def per_call_ms(call, n):
        for _ in range(5):
            call()
        start = time.perf_counter()
        for _ in range(n):
            call()
        return (time.perf_counter() - start) * 1000 / n


    results = {}
    try:
        with sandboxed_tools.tool_sandboxes():
            for name, build in [("langchain", langchain), ("langgraph", langgraph),
                                ("pydantic_ai", pydantic_ai), ("openai_agents", openai_agents),
                                ("smolagents", smolagents), ("google_adk", google_adk),
                                ("autogen", autogen), ("agno", agno), ("strands", strands)]:
                try:
                    sandboxed, plain = build(SANDBOXED), build(PLAIN)
                except ImportError as exc:
                    results[name] = {"error": f"not installed ({exc.name})"}
                    continue
                ours, theirs = [], []
                for _ in range(5):  # alternate, so drift hits both sides alike
                    theirs.append(per_call_ms(plain, N))
                    ours.append(per_call_ms(sandboxed, N))
                results[name] = {"sandboxed": statistics.median(ours),
                                 "plain": statistics.median(theirs)}
    finally:
        server.kill()
    print(json.dumps(results))
    """
)


def setup(workdir: Path) -> None:
    web = workdir / "web"
    web.mkdir()
    (web / "page.html").write_text("<p>" + "x" * 2000 + "</p>\n")
    (workdir / "agents_bench.py").write_text(PROGRAM)


_results: dict[str, Any] = {}


def _measure(workdir: Path, runs: int) -> dict[str, Any]:
    if not _results:
        proc = subprocess.run(
            [
                sys.executable,
                str(workdir / "agents_bench.py"),
                str(REPO),
                str(workdir / "web"),
                PYTHON3,
                str(max(20, runs * 2)),
            ],
            cwd=workdir,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            _results["error"] = proc.stderr[-600:]
        else:
            _results.update(json.loads(proc.stdout.splitlines()[-1]))
    return _results


def _case(framework: str, label: str) -> Any:
    def case(workdir: Path, runs: int) -> dict[str, Any]:
        data = _measure(workdir, runs)
        name = f"agents: {label} tool call, sandboxed/plain"
        entry = data.get(framework) or {"error": data.get("error", "no result")}
        if "error" in entry:
            return {"name": name, "kind": "value", "value": f"not run: {entry['error']}"}
        ratio = entry["sandboxed"] / entry["plain"]
        verdict = "ok" if ratio <= 1.5 else "MISSED"
        text = (
            f"{entry['sandboxed']:.2f} ms sandboxed vs {entry['plain']:.2f} ms plain, "
            f"x{ratio:.2f}  target <= x1.5: {verdict}"
        )
        return {"name": name, "kind": "value", "value": text}

    case.__name__ = framework
    return case


CASES = [
    _case("langchain", "LangChain"),
    _case("langgraph", "LangGraph"),
    _case("pydantic_ai", "Pydantic AI"),
    _case("openai_agents", "OpenAI Agents SDK"),
    _case("smolagents", "smolagents"),
    _case("google_adk", "Google ADK"),
    _case("autogen", "AutoGen"),
    _case("agno", "Agno"),
    _case("strands", "Strands Agents"),
]
