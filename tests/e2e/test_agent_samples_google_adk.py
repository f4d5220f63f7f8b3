"""The Google ADK sample (examples/agents/google_adk): its ``LlmAgent`` run by ADK's
``InMemoryRunner`` with a scripted ``BaseLlm`` (no LLM, no API key); the tool bodies run in
python-sb's partial mode under their own rule files (issue 15)."""

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
    sample = load_sample("google_adk", "google.adk")

    def run(calls: list[tuple[str, dict[str, Any]]]) -> list[Outcome]:
        events = sample.run_agent(sample.make_agent(sample.ScriptedLlm(calls=calls)), "scripted")
        parts = [p for e in events if e.content for p in e.content.parts or []]
        assert parts[-1].text == "done"  # the run went on after errors
        responses = {
            p.function_response.id: p.function_response.response
            for p in parts
            if p.function_response
        }
        assert sorted(responses) == [str(i) for i in range(len(calls))]
        # The model reads the function response: the tool's dict, or {"error": text}.
        return [
            Outcome(True, r["error"]) if set(r) == {"error"} else Outcome(False, json.dumps(r))
            for r in (responses[str(i)] for i in range(len(calls)))
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
