"""The Strands Agents sample (examples/agents/strands): its ``Agent`` run by a scripted
``Model`` that streams tool uses (no LLM, no credentials); the tool bodies run in python-sb's
partial mode under their own rule files (issue 15)."""

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
    sample = load_sample("strands", "strands")

    def run(calls: list[tuple[str, dict[str, Any]]]) -> list[Outcome]:
        agent = sample.make_agent(sample.ScriptedModel(calls))
        assert str(agent("scripted")).strip() == "done"  # the run went on after errors
        results = sample.tool_results(agent)
        assert sorted(results) == [str(i) for i in range(len(calls))]
        # What the model reads: the tool result's text, and its status.
        return [
            Outcome(r["status"] == "error", "\n".join(c["text"] for c in r["content"]))
            for r in (results[str(i)] for i in range(len(calls)))
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
