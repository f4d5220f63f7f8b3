"""The Agno sample (examples/agents/agno): its ``Agent`` run by a scripted ``Model`` (no LLM);
the tool bodies run in python-sb's partial mode under their own rule files (issue 15)."""

from __future__ import annotations

import ast
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
    sample = load_sample("agno", "agno")

    def run(calls: list[tuple[str, dict[str, Any]]]) -> list[Outcome]:
        output = sample.make_agent(sample.ScriptedModel(calls)).run("scripted")
        assert output.content == "done"  # the run went on after errors
        executions = {e.tool_call_id: e for e in output.tools or []}
        assert sorted(executions) == [str(i) for i in range(len(calls))]
        # What the model reads: the tool message's text (a dict's repr, or the error's text).
        return [
            Outcome(True, str(e.result))
            if e.tool_call_error
            else Outcome(False, json.dumps(ast.literal_eval(str(e.result))))
            for e in (executions[str(i)] for i in range(len(calls)))
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
