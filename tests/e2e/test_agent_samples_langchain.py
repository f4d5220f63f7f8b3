"""The LangChain sample (examples/agents/langchain): its ``@tool`` tools driven through
langchain-core's tool-calling API by a scripted chat model (no LLM); the tool bodies run in
python-sb's partial mode under their own rule files (issue 15)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.agent_samples_support import (
    Outcome,
    Web,
    check_normal_calls,
    check_refused_evaluations,
    check_refused_hosts,
    check_timeout,
    load_sample,
    web,
)

__all__ = ["web"]  # the fixture


@pytest.fixture(scope="module")
def drive() -> Any:
    sample = load_sample("langchain", "langchain_core")
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, ToolMessage

    class ScriptedModel(FakeMessagesListChatModel):
        """A chat model that replies from a script (the tool calls an LLM would make)."""

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    def run(calls: list[tuple[str, dict[str, Any]]]) -> list[Outcome]:
        tool_calls = [{"name": n, "args": a, "id": str(i)} for i, (n, a) in enumerate(calls)]
        model = ScriptedModel(responses=[AIMessage("", tool_calls=tool_calls), AIMessage("done")])
        messages = sample.run_agent(model, "scripted")
        results = [m for m in messages if isinstance(m, ToolMessage)]
        assert [m.tool_call_id for m in results] == [c["id"] for c in tool_calls]
        assert messages[-1].content == "done"  # the loop went on after errors
        return [Outcome(m.status == "error", str(m.content)) for m in results]

    return run


def test_normal_calls_run_in_the_sandbox(drive: Any, web: Web) -> None:
    check_normal_calls(drive, web)


def test_refused_hosts_reach_the_model(drive: Any, web: Web) -> None:
    check_refused_hosts(drive, web)


def test_refused_evaluations(drive: Any, web: Web) -> None:
    check_refused_evaluations(drive, web)


def test_timeout(drive: Any, web: Web) -> None:
    check_timeout(drive, web)
