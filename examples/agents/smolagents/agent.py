"""smolagents: a ``ToolCallingAgent`` whose two tools run in the sandbox (python-sb partial
mode).

The tools are declared with smolagents' ``@tool`` (the docstring's ``Args:`` section is the
schema); each calls the ``@sandbox`` function of ``examples/agents/common/sandboxed_tools.py``,
which runs in a worker under its own rule file. smolagents hands the model the text of the
exception a tool raises (``Error executing tool ...``); ``call_tool`` makes that text the
refusal with the rule that refused it (or the line that would allow it), or the timeout.

    python agent.py   # a scripted model asks for both tools (no LLM, no API key)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from smolagents import Model, ToolCallingAgent, tool

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import sandboxed_tools


@tool
def fetch_webpage(url: str) -> dict:  # type: ignore[type-arg]
    """Fetch a web page (at most 100 KB of it) and return its text.

    Args:
        url: the address of the page (http or https).
    """

    return sandboxed_tools.call_tool(sandboxed_tools.fetch_webpage, url)  # type: ignore[no-any-return]


@tool
def evaluate_expression(expr: str) -> dict:  # type: ignore[type-arg]
    """Evaluate an arithmetic expression: numbers, + - * / // % **, comparisons, and abs,
    round, min, max, sum, range, sqrt, pi.

    Args:
        expr: the expression, e.g. "2 * (3 + 4) ** 2".
    """

    return sandboxed_tools.call_tool(sandboxed_tools.evaluate_expression, expr)  # type: ignore[no-any-return]


def make_agent(model: Model, **options: Any) -> ToolCallingAgent:
    """An agent with the two sandboxed tools (and smolagents' own ``final_answer``)."""

    return ToolCallingAgent(tools=[fetch_webpage, evaluate_expression], model=model, **options)


class ScriptedModel(Model):
    """A model that makes the scripted tool calls, one per step, then gives the final answer
    'done' (what an LLM would do, without one)."""

    def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        super().__init__(model_id="scripted")
        self.calls = [*calls, ("final_answer", {"answer": "done"})]

    def generate(
        self,
        messages: Any,
        stop_sequences: Any = None,
        response_format: Any = None,
        tools_to_call_from: Any = None,
        **kwargs: Any,
    ) -> Any:
        from smolagents.models import (
            ChatMessage,
            ChatMessageToolCall,
            ChatMessageToolCallFunction,
            MessageRole,
        )

        name, arguments = self.calls.pop(0)
        call = ChatMessageToolCall(
            id=str(len(self.calls)),
            type="function",
            function=ChatMessageToolCallFunction(name=name, arguments=arguments),
        )
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


if __name__ == "__main__":
    model = ScriptedModel(
        [
            ("evaluate_expression", {"expr": "2 * (3 + 4) ** 2"}),
            ("fetch_webpage", {"url": "http://169.254.169.254/"}),
        ]
    )
    with sandboxed_tools.tool_sandboxes():
        print(make_agent(model).run("2*(3+4)**2? metadata?"))
