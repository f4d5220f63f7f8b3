"""The Pydantic AI sample (examples/agents/pydantic_ai): its ``Agent`` run by a
``FunctionModel`` that makes scripted tool calls (no LLM); the tool bodies run in python-sb's
partial mode under their own rule files (issue 15)."""

from __future__ import annotations

import json
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
    sample = load_sample("pydantic_ai", "pydantic_ai")
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def run(calls: list[tuple[str, dict[str, Any]]]) -> list[Outcome]:
        def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            if len(messages) == 1:
                parts = [ToolCallPart(n, a, tool_call_id=str(i)) for i, (n, a) in enumerate(calls)]
                return ModelResponse(parts=parts)  # type: ignore[arg-type]
            return ModelResponse(parts=[TextPart("done")])

        result = sample.agent.run_sync("scripted", model=FunctionModel(scripted))
        assert result.output == "done"  # the run went on after errors
        returns = [
            part
            for message in result.all_messages()
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        assert [p.tool_call_id for p in returns] == [str(i) for i in range(len(calls))]
        return [
            Outcome(
                p.outcome != "success",
                p.content if isinstance(p.content, str) else json.dumps(p.content),
            )
            for p in returns
        ]

    return run


def test_normal_calls_run_in_the_sandbox(drive: Any, web: Web) -> None:
    check_normal_calls(drive, web)


def test_refused_hosts_reach_the_model(drive: Any, web: Web) -> None:
    check_refused_hosts(drive, web)


def test_refused_evaluations(drive: Any, web: Web) -> None:
    check_refused_evaluations(drive, web)


def test_timeout(drive: Any, web: Web) -> None:
    check_timeout(drive, web)
