"""OpenAI Agents SDK: an ``Agent`` whose two function tools run in the sandbox (python-sb
partial mode).

``function_tool`` is applied to the ``@sandbox`` functions of
``examples/agents/common/sandboxed_tools.py`` as they are (the SDK builds the schemas from their
signatures and docstrings); their bodies run in workers under their own rule files. The SDK
hands the model the text of ``failure_error_function`` when a tool raises: ``tool_error`` gives
a refusal, a timeout or a refused expression with the rule that refused it (or the line that
would allow it), and anything else as the SDK's default text. The model is any ``Model``
(``Runner.run_sync(agent, question, run_config=RunConfig(model=...))``).

    python agent.py   # a scripted Model asks for both tools (no LLM, no API key)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from agents import Agent, RunContextWrapper, function_tool
from agents.tool import default_tool_error_function

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import sandboxed_tools


def tool_error(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """The text the model reads for a failed tool call."""

    if sandboxed_tools.is_tool_failure(error):
        return sandboxed_tools.tool_error_text(error)
    return default_tool_error_function(ctx, error)


fetch_webpage = function_tool(sandboxed_tools.fetch_webpage, failure_error_function=tool_error)
evaluate_expression = function_tool(
    sandboxed_tools.evaluate_expression, failure_error_function=tool_error
)

agent = Agent(
    name="sandboxed-tools",
    instructions="Use the tools to answer.",
    tools=[fetch_webpage, evaluate_expression],
)


if __name__ == "__main__":
    import json
    from collections.abc import AsyncIterator

    from agents import ModelResponse, RunConfig, Runner, Usage
    from agents.items import ToolCallOutputItem
    from agents.models.interface import Model
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    class ScriptedModel(Model):
        """Asks for both tools, then answers 'done'."""

        def __init__(self) -> None:
            self.turn = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            self.turn += 1
            if self.turn == 1:
                calls = [
                    ("evaluate_expression", {"expr": "2 * (3 + 4) ** 2"}),
                    ("fetch_webpage", {"url": "http://169.254.169.254/"}),
                ]
                output: list[Any] = [
                    ResponseFunctionToolCall(
                        type="function_call", name=n, arguments=json.dumps(a), call_id=str(i)
                    )
                    for i, (n, a) in enumerate(calls)
                ]
            else:
                text = ResponseOutputText(type="output_text", text="done", annotations=[])
                output = [
                    ResponseOutputMessage(
                        id="m",
                        type="message",
                        role="assistant",
                        status="completed",
                        content=[text],
                    )
                ]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            raise NotImplementedError("the scripted model does not stream")

    config = RunConfig(model=ScriptedModel(), tracing_disabled=True)
    with sandboxed_tools.tool_sandboxes():
        result = Runner.run_sync(agent, "2*(3+4)**2? metadata?", run_config=config)
    for item in result.new_items:
        if isinstance(item, ToolCallOutputItem):
            print(item.output)
    print(result.final_output)
