"""The OpenAI Agents SDK sample (examples/agents/openai_agents): its ``Agent`` run by
``Runner`` with a scripted ``Model`` (no LLM, no API key); the tool bodies run in python-sb's
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
    sample = load_sample("openai_agents", "agents")
    from agents import ModelResponse, RunConfig, Runner, Usage
    from agents.items import ToolCallOutputItem
    from agents.models.interface import Model
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    class ScriptedModel(Model):
        """A model that makes the scripted tool calls, then answers 'done'."""

        def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
            self.calls, self.turn = calls, 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            self.turn += 1
            output: list[Any]
            if self.turn == 1:
                output = [
                    ResponseFunctionToolCall(
                        type="function_call", name=n, arguments=json.dumps(a), call_id=str(i)
                    )
                    for i, (n, a) in enumerate(self.calls)
                ]
            else:
                text = ResponseOutputText(type="output_text", text="done", annotations=[])
                output = [
                    ResponseOutputMessage(
                        id="m", type="message", role="assistant", status="completed", content=[text]
                    )
                ]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the scripted model does not stream")

    def run(calls: list[tuple[str, dict[str, Any]]]) -> list[Outcome]:
        config = RunConfig(model=ScriptedModel(calls), tracing_disabled=True)
        result = Runner.run_sync(sample.agent, "scripted", run_config=config)
        assert result.final_output == "done"  # the run went on after errors
        outputs = [i for i in result.new_items if isinstance(i, ToolCallOutputItem)]
        assert [i.raw_item["call_id"] for i in outputs] == [str(n) for n in range(len(calls))]
        # A tool's result is its dict; a failure is the text of failure_error_function.
        return [
            Outcome(True, i.output)
            if isinstance(i.output, str)
            else Outcome(False, json.dumps(i.output))
            for i in outputs
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
