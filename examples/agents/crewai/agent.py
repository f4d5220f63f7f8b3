"""CrewAI: an ``Agent`` (in a one-task ``Crew``) whose two tools run in the sandbox (python-sb
partial mode).

The tools are declared with CrewAI's ``@tool``; each calls the ``@sandbox`` function of
``examples/agents/common/sandboxed_tools.py``, which runs in a worker under its own rule file.
CrewAI shows the model the text of the exception a tool raises as the action's observation;
``call_tool`` makes that text the refusal with the rule that refused it (or the line that would
allow it), or the timeout.

CrewAI pins its own versions of openai and pydantic: it has its own virtualenv
(``make-venv.sh``), not the ``[agents]`` extra.

    .venv/crewai/bin/python agent.py   # a scripted LLM asks for both tools (no LLM, no key)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai.tools import tool

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import sandboxed_tools


@tool("fetch_webpage")
def fetch_webpage(url: str) -> dict[str, object]:
    """Fetch a web page (at most 100 KB of it) and return its text."""

    return sandboxed_tools.call_tool(sandboxed_tools.fetch_webpage, url)  # type: ignore[no-any-return]


@tool("evaluate_expression")
def evaluate_expression(expr: str) -> dict[str, object]:
    """Evaluate an arithmetic expression: numbers, + - * / // % **, comparisons, and abs,
    round, min, max, sum, range, sqrt, pi."""

    return sandboxed_tools.call_tool(sandboxed_tools.evaluate_expression, expr)  # type: ignore[no-any-return]


def make_crew(llm: BaseLLM | str, question: str) -> Crew:
    """A crew of one agent with the two sandboxed tools, on one task: ``question``."""

    agent = Agent(
        role="Researcher",
        goal="Answer questions with the tools",
        backstory="Careful with what web pages ask for.",
        tools=[fetch_webpage, evaluate_expression],
        llm=llm,
        max_iter=20,
        verbose=False,
    )
    task = Task(description=question, expected_output="The answer.", agent=agent)
    return Crew(agents=[agent], tasks=[task], verbose=False)


class ScriptedLLM(BaseLLM):
    """An LLM that makes the scripted tool calls in CrewAI's ReAct format, one per turn, then
    gives the final answer 'done'; it records what it reads back after each action (the
    observation), as an LLM would read it."""

    calls: list[tuple[str, dict[str, Any]]] = []
    observations: list[str] = []

    def call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        if self._turn > 0:  # CrewAI appended the observation to our last action
            actions = [m["content"] for m in messages if m["role"] == "assistant"]
            self.observations.append(actions[-1].split("\nObservation:", 1)[1].strip())
        self._turn += 1
        if self.calls:
            name, arguments = self.calls.pop(0)
            return f"Thought: use {name}\nAction: {name}\nAction Input: {json.dumps(arguments)}"
        return "Thought: I now know the final answer\nFinal Answer: done"

    _turn: int = 0

    def supports_function_calling(self) -> bool:
        return False  # the ReAct text format: CrewAI parses the action and runs the tool


if __name__ == "__main__":
    llm = ScriptedLLM(
        model="scripted",
        calls=[
            ("evaluate_expression", {"expr": "2 * (3 + 4) ** 2"}),
            ("fetch_webpage", {"url": "http://169.254.169.254/"}),
        ],
    )
    with sandboxed_tools.tool_sandboxes():
        print(make_crew(llm, "2*(3+4)**2? metadata?").kickoff())
    for observation in llm.observations:
        print("--", observation)
