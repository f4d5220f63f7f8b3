"""The smolagents sample (examples/agents/smolagents): its ``ToolCallingAgent`` run by a
scripted ``Model`` (one tool call per step, then ``final_answer``; no LLM); the tool bodies run
in python-sb's partial mode under their own rule files (issue 15)."""

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
    sample = load_sample("smolagents", "smolagents")
    from smolagents.memory import ActionStep

    def run(calls: list[tuple[str, dict[str, Any]]]) -> list[Outcome]:
        agent = sample.make_agent(sample.ScriptedModel(calls), verbosity_level=-1)
        assert agent.run("scripted") == "done"  # the run went on after errors
        steps = [s for s in agent.memory.steps if isinstance(s, ActionStep)]
        assert len(steps) == len(calls) + 1  # and the final answer
        # What the model reads next: the step's error, or the tool's result (its repr).
        return [
            Outcome(True, str(s.error))
            if s.error is not None
            else Outcome(False, json.dumps(ast.literal_eval(str(s.observations))))
            for s in steps[:-1]
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
