"""Strands Agents: an ``Agent`` whose two tools run in the sandbox (python-sb partial mode).

The tools are declared with Strands' ``@tool``; each calls the ``@sandbox`` function of
``examples/agents/common/sandboxed_tools.py``, which runs in a worker under its own rule file.
A refusal, a timeout or a refused expression is returned as a Strands tool result with
``status: "error"`` whose text names the rule that refused (or the line that would allow it);
other exceptions are reported as Strands reports them.

    python agent.py   # a scripted Model asks for both tools (no LLM, no credentials)
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from strands import Agent, tool
from strands.models.model import Model

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import sandboxed_tools


def _sandboxed_call(function: Callable[..., Any], *args: Any) -> Any:
    try:
        return function(*args)
    except Exception as exc:
        if sandboxed_tools.is_tool_failure(exc):
            text = sandboxed_tools.tool_error_text(exc)
            return {"status": "error", "content": [{"text": text}]}
        raise


@tool
def fetch_webpage(url: str) -> dict[str, Any]:
    """Fetch a web page (at most 100 KB of it) and return its text.

    Args:
        url: the address of the page (http or https).
    """

    return _sandboxed_call(sandboxed_tools.fetch_webpage, url)  # type: ignore[no-any-return]


@tool
def evaluate_expression(expr: str) -> dict[str, Any]:
    """Evaluate an arithmetic expression: numbers, + - * / // % **, comparisons, and abs,
    round, min, max, sum, range, sqrt, pi.

    Args:
        expr: the expression, e.g. "2 * (3 + 4) ** 2".
    """

    return _sandboxed_call(sandboxed_tools.evaluate_expression, expr)  # type: ignore[no-any-return]


def make_agent(model: Model | str | None = None) -> Agent:
    """The agent with the two sandboxed tools (Strands' default model when ``model`` is None)."""

    return Agent(model=model, tools=[fetch_webpage, evaluate_expression], callback_handler=None)


class ScriptedModel(Model):
    """A model that streams the scripted tool uses, then the answer 'done' (what an LLM would
    do, without one), in Strands' stream-event format."""

    def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        self.calls = calls

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {"model_id": "scripted"}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the scripted model gives no structured output")

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:  # type: ignore[override]
        yield {"messageStart": {"role": "assistant"}}
        answered = any("toolResult" in block for m in messages for block in m["content"])
        if answered:
            yield {"contentBlockDelta": {"delta": {"text": "done"}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        for i, (name, arguments) in enumerate(self.calls):
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": str(i), "name": name}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(arguments)}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}


def tool_results(agent: Agent) -> dict[str, dict[str, Any]]:
    """The tool results the model read, by tool-use id."""

    return {
        block["toolResult"]["toolUseId"]: block["toolResult"]
        for message in agent.messages
        for block in message["content"]
        if "toolResult" in block
    }


if __name__ == "__main__":
    agent = make_agent(
        ScriptedModel(
            [
                ("evaluate_expression", {"expr": "2 * (3 + 4) ** 2"}),
                ("fetch_webpage", {"url": "http://169.254.169.254/"}),
            ]
        )
    )
    with sandboxed_tools.tool_sandboxes():
        print(agent("2*(3+4)**2? metadata?"))
    for result in tool_results(agent).values():
        print(result["status"], result["content"])
