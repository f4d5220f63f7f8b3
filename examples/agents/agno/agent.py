"""Agno: an ``Agent`` whose two tools run in the sandbox (python-sb partial mode).

The tools are declared with Agno's ``@tool``; each calls the ``@sandbox`` function of
``examples/agents/common/sandboxed_tools.py``, which runs in a worker under its own rule file.
Agno gives the model the text of the exception a tool raises as the tool's result (and marks
the call ``tool_call_error``); ``call_tool`` makes that text the refusal with the rule that
refused it (or the line that would allow it), or the timeout.

    python agent.py   # a scripted Model asks for both tools (no LLM, no API key)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("AGNO_TELEMETRY", "false")

from agno.agent import Agent
from agno.models.base import Model
from agno.models.response import ModelResponse
from agno.tools import tool

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import sandboxed_tools


@tool
def fetch_webpage(url: str) -> dict[str, Any]:
    """Fetch a web page (at most 100 KB of it) and return its text."""

    return sandboxed_tools.call_tool(sandboxed_tools.fetch_webpage, url)  # type: ignore[no-any-return]


@tool
def evaluate_expression(expr: str) -> dict[str, Any]:
    """Evaluate an arithmetic expression: numbers, + - * / // % **, comparisons, and abs,
    round, min, max, sum, range, sqrt, pi."""

    return sandboxed_tools.call_tool(sandboxed_tools.evaluate_expression, expr)  # type: ignore[no-any-return]


def make_agent(model: Model | str) -> Agent:
    """The agent with the two sandboxed tools, on ``model`` (``"openai:gpt-4o"``, a Model)."""

    return Agent(model=model, tools=[fetch_webpage, evaluate_expression], telemetry=False)


class ScriptedModel(Model):
    """A model that makes the scripted tool calls, then answers 'done' (what an LLM would do,
    without one)."""

    def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        super().__init__(id="scripted", name="scripted", provider="scripted")
        self.calls = calls

    def invoke(self, *args: Any, messages: Any = None, **kwargs: Any) -> ModelResponse:
        import json

        if any(m.role == "tool" for m in messages or []):
            return ModelResponse(role="assistant", content="done")
        tool_calls = [
            {"id": str(i), "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, (n, a) in enumerate(self.calls)
        ]
        return ModelResponse(role="assistant", content="", tool_calls=tool_calls)

    async def ainvoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return self.invoke(*args, **kwargs)

    def invoke_stream(self, *args: Any, **kwargs: Any) -> Any:
        yield self.invoke(*args, **kwargs)

    async def ainvoke_stream(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        yield self.invoke(*args, **kwargs)

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]


if __name__ == "__main__":
    model = ScriptedModel(
        [
            ("evaluate_expression", {"expr": "2 * (3 + 4) ** 2"}),
            ("fetch_webpage", {"url": "http://169.254.169.254/"}),
        ]
    )
    with sandboxed_tools.tool_sandboxes():
        output = make_agent(model).run("2*(3+4)**2? metadata?")
    for execution in output.tools or []:
        print(execution.tool_call_error, execution.result)
    print(output.content)
