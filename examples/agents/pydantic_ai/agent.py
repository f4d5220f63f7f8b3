"""Pydantic AI: an ``Agent`` whose two tools run in the sandbox (python-sb partial mode).

The tools are declared with ``@agent.tool_plain``; each calls the ``@sandbox`` function of
``examples/agents/common/sandboxed_tools.py``, which runs in a worker under its own rule file.
A refusal, a timeout or a refused expression is raised as ``ModelRetry``: Pydantic AI sends
its text -- naming the rule that refused, or the line that would allow it -- back to the model
as the tool's retry prompt, and the run goes on. The model is chosen at run time
(``agent.run_sync(question, model=...)``).

    python agent.py   # a FunctionModel asks for both tools (no LLM, no API key)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, ModelRetry

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import sandboxed_tools

# retries: how many failed calls of one tool the model may see before the run stops.
agent = Agent(name="sandboxed-tools", retries=3, instructions="Use the tools to answer.")


def _sandboxed_call(function: Callable[..., Any], *args: Any) -> Any:
    try:
        return function(*args)
    except Exception as exc:
        if sandboxed_tools.is_tool_failure(exc):
            raise ModelRetry(sandboxed_tools.tool_error_text(exc)) from exc
        raise


@agent.tool_plain
def fetch_webpage(url: str) -> dict[str, object]:
    """Fetch a web page (at most 100 KB of it) and return its text."""

    return _sandboxed_call(sandboxed_tools.fetch_webpage, url)  # type: ignore[no-any-return]


@agent.tool_plain
def evaluate_expression(expr: str) -> dict[str, object]:
    """Evaluate an arithmetic expression: numbers, + - * / // % **, comparisons, and abs,
    round, min, max, sum, range, sqrt, pi."""

    return _sandboxed_call(sandboxed_tools.evaluate_expression, expr)  # type: ignore[no-any-return]


if __name__ == "__main__":
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[
                    ToolCallPart("evaluate_expression", {"expr": "2 * (3 + 4) ** 2"}),
                    ToolCallPart("fetch_webpage", {"url": "http://169.254.169.254/"}),
                ]
            )
        return ModelResponse(parts=[TextPart("done")])

    with sandboxed_tools.tool_sandboxes():
        result = agent.run_sync("2*(3+4)**2? metadata?", model=FunctionModel(scripted))
    for message in result.all_messages():
        for part in message.parts:
            print(type(part).__name__, getattr(part, "content", ""))
