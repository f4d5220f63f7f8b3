"""Google ADK: an ``LlmAgent`` whose two function tools run in the sandbox (python-sb partial
mode).

The ``@sandbox`` functions of ``examples/agents/common/sandboxed_tools.py`` are given to the
agent's ``tools`` as they are (ADK wraps a plain function in a ``FunctionTool``, with the
declaration built from its signature and docstring); their bodies run in workers under their
own rule files. ``on_tool_error_callback=tool_error`` turns a refusal, a timeout or a refused
expression into the function response ``{"error": ...}`` naming the rule that refused (or the
line that would allow it); other exceptions propagate as ADK does by default.

    python agent.py   # a scripted model asks for both tools (no LLM, no API key)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import sandboxed_tools


def tool_error(
    tool: Any, args: dict[str, Any], tool_context: Any, error: Exception
) -> dict[str, Any] | None:
    """The function response the model reads for a failed tool call (None: ADK's default)."""

    if sandboxed_tools.is_tool_failure(error):
        return {"error": sandboxed_tools.tool_error_text(error)}
    return None


def make_agent(model: BaseLlm | str) -> LlmAgent:
    """The agent, with the two sandboxed tools, on ``model`` (a name such as
    ``"gemini-2.5-flash"``, or a ``BaseLlm``)."""

    return LlmAgent(
        name="sandboxed_tools",
        model=model,
        instruction="Use the tools to answer.",
        tools=[sandboxed_tools.fetch_webpage, sandboxed_tools.evaluate_expression],
        on_tool_error_callback=tool_error,
    )


def run_agent(agent: LlmAgent, question: str) -> list[Any]:
    """Run one turn with an in-memory session; the events."""

    import asyncio

    from google.adk.runners import InMemoryRunner
    from google.genai import types

    runner = InMemoryRunner(agent=agent, app_name="sandboxed_tools")
    create = runner.session_service.create_session(app_name="sandboxed_tools", user_id="u")
    session = asyncio.run(create)
    message = types.Content(role="user", parts=[types.Part(text=question)])
    return list(runner.run(user_id="u", session_id=session.id, new_message=message))


class ScriptedLlm(BaseLlm):
    """A model that makes the scripted function calls, then answers 'done' (what an LLM would
    do, without one)."""

    model: str = "scripted"
    calls: list[tuple[str, dict[str, Any]]] = []

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
        from google.adk.models.llm_response import LlmResponse
        from google.genai import types

        answered = any(
            part.function_response is not None
            for content in llm_request.contents
            for part in content.parts or []
        )
        if answered:
            parts = [types.Part(text="done")]
        else:
            parts = [
                types.Part(function_call=types.FunctionCall(name=n, args=a, id=str(i)))
                for i, (n, a) in enumerate(self.calls)
            ]
        yield LlmResponse(content=types.Content(role="model", parts=parts))


if __name__ == "__main__":
    model = ScriptedLlm(
        calls=[
            ("evaluate_expression", {"expr": "2 * (3 + 4) ** 2"}),
            ("fetch_webpage", {"url": "http://169.254.169.254/"}),
        ]
    )
    with sandboxed_tools.tool_sandboxes():
        for event in run_agent(make_agent(model), "2*(3+4)**2? metadata?"):
            for part in event.content.parts if event.content else []:
                print(part.function_response.response if part.function_response else part.text)
