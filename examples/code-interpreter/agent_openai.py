"""The code interpreter as the tools of an OpenAI Agents SDK ``Agent``.

The SDK starts ``server.py`` over stdio (``MCPServerStdio``) and lists its tools for the model;
each session the model starts is a sandboxed kernel. Run as a demo, a scripted model (no LLM,
no API key) starts a session, computes in it, tries to read ``/etc/passwd`` (refused: the model
reads the rule that refused it) and answers from what the session computed.

    python agent_openai.py
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from agents import Agent, ModelResponse, RunConfig, Runner, Usage
from agents.items import ToolCallOutputItem
from agents.mcp import MCPServerStdio
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

HERE = Path(__file__).resolve().parent


class ScriptedModel(Model):
    """Calls the interpreter's tools in a fixed order, reading the session id and the result
    from the tool outputs it is given back."""

    def __init__(self) -> None:
        self.turn = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        given = json.dumps(kwargs.get("input", args[1] if len(args) > 1 else ""), default=str)
        session = re.search(r"session_id[^0-9a-f]+([0-9a-f]{12})", given)
        self.turn += 1
        calls: list[tuple[str, dict[str, Any]]] = []
        if self.turn == 1:
            calls = [("start_session", {})]
        elif self.turn == 2 and session:
            sid = session.group(1)
            calls = [
                ("run_code", {"session_id": sid, "code": "x = 6 * 7\nx"}),
                ("run_code", {"session_id": sid, "code": "open('/etc/passwd').read()"}),
            ]
        if calls:
            output: list[Any] = [
                ResponseFunctionToolCall(
                    type="function_call",
                    name=name,
                    arguments=json.dumps(args),
                    call_id=f"call-{self.turn}-{i}",
                )
                for i, (name, args) in enumerate(calls)
            ]
        else:
            answer = re.findall(r"\[ok\](?:\\+n|\n)(\d+)", given)
            text = f"the answer is {answer[-1] if answer else 'unknown'}"
            output = [
                ResponseOutputMessage(
                    id="m",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the scripted model does not stream")


async def main() -> None:
    params = {
        "command": sys.executable,
        "args": [str(HERE / "server.py")],
        "env": dict(os.environ),
        "cwd": str(HERE),
    }
    async with MCPServerStdio(params=params, client_session_timeout_seconds=180) as server:
        agent = Agent(
            name="analyst",
            instructions="Answer with the code interpreter's tools.",
            mcp_servers=[server],
        )
        config = RunConfig(model=ScriptedModel(), tracing_disabled=True)
        result = await Runner.run(agent, "What is 6 * 7?", run_config=config)
    for item in result.new_items:
        if isinstance(item, ToolCallOutputItem):
            print(f"tool: {item.output}")
    print(f"final: {result.final_output}")


if __name__ == "__main__":
    asyncio.run(main())
