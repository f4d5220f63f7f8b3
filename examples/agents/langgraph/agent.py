"""LangGraph: the sandboxed tools in a ``ToolNode`` (python-sb partial mode).

The ``@sandbox`` functions of ``examples/agents/common/sandboxed_tools.py`` are given to
``ToolNode`` as they are (it builds the tool schemas from their signatures and docstrings);
their bodies run in workers under their own rule files. ``handle_tool_errors=tool_error`` turns
a refusal, a timeout or a bad expression into a ``ToolMessage`` with ``status="error"`` whose
text names the rule that refused (or the line that would allow it): the model reads it and the
graph goes on. Other exceptions (bugs of the agent) are not caught.

    python agent.py   # a scripted model asks for both tools (no LLM, no API key)
"""

# No `from __future__ import annotations` here: ToolNode reads the raw annotation of the error
# handler's parameter to learn which exceptions it catches (a string would not do).
import sys
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from pysandboxes.errors import SandBoxError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import sandboxed_tools

TOOLS = [sandboxed_tools.fetch_webpage, sandboxed_tools.evaluate_expression]


def tool_error(exc: SandBoxError | OSError | ValueError | ArithmeticError) -> str:
    """The error text the model reads for a failed tool call (ToolNode catches the exception
    types this annotation names)."""

    return sandboxed_tools.tool_error_text(exc)


def build_graph(model: BaseChatModel) -> Any:
    """The usual tool-calling graph: the model, then the tools while it asks for them."""

    bound = model.bind_tools(TOOLS)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(TOOLS, handle_tool_errors=tool_error))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


if __name__ == "__main__":
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage

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
        state = build_graph(model).invoke({"messages": [("user", "2*(3+4)**2? metadata?")]})
        for message in state["messages"]:
            message.pretty_print()
