"""LangChain (langchain-core) tools whose bodies run in the sandbox (python-sb partial mode).

``fetch_webpage`` and ``evaluate_expression`` are declared with LangChain's ``@tool``; each
calls the sandboxed function of ``examples/agents/common/sandboxed_tools.py``, which runs in a
worker under its own rule file. A refusal, a timeout or a bad expression becomes a
``ToolException`` (``handle_tool_error=True``): the model reads the error text -- naming the
rule that refused, or the line that would allow it -- as the tool's result instead of the agent
crashing. ``run_agent`` is the plain tool-calling loop of langchain-core: any chat model with
``bind_tools`` drives it.

    python agent.py   # a scripted model asks for both tools (no LLM, no API key)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import BaseTool, ToolException, tool

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import sandboxed_tools


def _sandboxed_call(function: Any, *args: Any) -> Any:
    try:
        return function(*args)
    except Exception as exc:
        if sandboxed_tools.is_tool_failure(exc):
            raise ToolException(sandboxed_tools.tool_error_text(exc)) from exc
        raise


@tool
def fetch_webpage(url: str) -> dict[str, object]:
    """Fetch a web page (at most 100 KB of it) and return its text."""

    return _sandboxed_call(sandboxed_tools.fetch_webpage, url)  # type: ignore[no-any-return]


@tool
def evaluate_expression(expr: str) -> dict[str, object]:
    """Evaluate an arithmetic expression: numbers, + - * / // % **, comparisons, and abs,
    round, min, max, sum, range, sqrt, pi."""

    return _sandboxed_call(sandboxed_tools.evaluate_expression, expr)  # type: ignore[no-any-return]


fetch_webpage.handle_tool_error = True
evaluate_expression.handle_tool_error = True
TOOLS: list[BaseTool] = [fetch_webpage, evaluate_expression]


def run_agent(model: BaseChatModel, question: str, max_turns: int = 10) -> list[BaseMessage]:
    """Ask ``model`` (bound to the tools) until it answers without a tool call; the
    conversation, tool results included."""

    bound = model.bind_tools(TOOLS)
    by_name = {t.name: t for t in TOOLS}
    messages: list[BaseMessage] = [HumanMessage(question)]
    for _ in range(max_turns):
        reply = bound.invoke(messages)
        messages.append(reply)
        if not isinstance(reply, AIMessage) or not reply.tool_calls:
            return messages
        for call in reply.tool_calls:
            messages.append(by_name[call["name"]].invoke(call))
    return messages


if __name__ == "__main__":
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel

    class ScriptedModel(FakeMessagesListChatModel):
        """Replies from a script; ignores the tools it is bound to."""

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    calls = [
        {"name": "evaluate_expression", "args": {"expr": "2 * (3 + 4) ** 2"}, "id": "1"},
        {"name": "fetch_webpage", "args": {"url": "http://169.254.169.254/"}, "id": "2"},
    ]
    model = ScriptedModel(responses=[AIMessage("", tool_calls=calls), AIMessage("done")])
    with sandboxed_tools.tool_sandboxes():
        for message in run_agent(model, "What is 2*(3+4)**2? And the metadata?"):
            message.pretty_print()
