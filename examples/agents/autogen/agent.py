"""AutoGen (autogen-agentchat): an ``AssistantAgent`` whose two tools run in the sandbox
(python-sb partial mode).

The tools are plain functions given to the agent's ``tools`` (AutoGen wraps each in a
``FunctionTool``, its schema from the signature and docstring); each calls the ``@sandbox``
function of ``examples/agents/common/sandboxed_tools.py``, which runs in a worker under its own
rule file. AutoGen returns the text of the exception a tool raises to the model as a
``FunctionExecutionResult`` with ``is_error=True``; ``call_tool`` makes that text the refusal
with the rule that refused it (or the line that would allow it), or the timeout.

    python agent.py   # a ReplayChatCompletionClient asks for both tools (no LLM, no API key)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_core.models import ChatCompletionClient

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import sandboxed_tools


def fetch_webpage(url: str) -> dict[str, Any]:
    """Fetch a web page (at most 100 KB of it) and return its text."""

    return sandboxed_tools.call_tool(sandboxed_tools.fetch_webpage, url)  # type: ignore[no-any-return]


def evaluate_expression(expr: str) -> dict[str, Any]:
    """Evaluate an arithmetic expression: numbers, + - * / // % **, comparisons, and abs,
    round, min, max, sum, range, sqrt, pi."""

    return sandboxed_tools.call_tool(sandboxed_tools.evaluate_expression, expr)  # type: ignore[no-any-return]


def make_agent(model_client: ChatCompletionClient) -> AssistantAgent:
    """The agent with the two sandboxed tools (one round of tool calls per turn, as AutoGen's
    default)."""

    return AssistantAgent(
        "sandboxed_tools", model_client=model_client, tools=[fetch_webpage, evaluate_expression]
    )


def scripted_client(calls: list[tuple[str, dict[str, Any]]]) -> ChatCompletionClient:
    """AutoGen's replay client, replying with the scripted tool calls (no LLM)."""

    import json

    from autogen_core import FunctionCall
    from autogen_core.models import CreateResult, RequestUsage
    from autogen_ext.models.replay import ReplayChatCompletionClient

    reply = CreateResult(
        finish_reason="function_calls",
        content=[
            FunctionCall(id=str(i), name=n, arguments=json.dumps(a))
            for i, (n, a) in enumerate(calls)
        ],
        usage=RequestUsage(prompt_tokens=0, completion_tokens=0),
        cached=False,
    )
    info = {
        "function_calling": True,
        "vision": False,
        "json_output": False,
        "family": "unknown",
        "structured_output": False,
    }
    return ReplayChatCompletionClient([reply], model_info=info)  # type: ignore[arg-type]


if __name__ == "__main__":
    import asyncio

    from autogen_agentchat.messages import ToolCallExecutionEvent

    client = scripted_client(
        [
            ("evaluate_expression", {"expr": "2 * (3 + 4) ** 2"}),
            ("fetch_webpage", {"url": "http://169.254.169.254/"}),
        ]
    )
    with sandboxed_tools.tool_sandboxes():
        result = asyncio.run(make_agent(client).run(task="2*(3+4)**2? metadata?"))
    for message in result.messages:
        if isinstance(message, ToolCallExecutionEvent):
            for outcome in message.content:
                print(outcome.is_error, outcome.content)
