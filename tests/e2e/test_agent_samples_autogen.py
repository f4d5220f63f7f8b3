"""The AutoGen sample (examples/agents/autogen): its ``AssistantAgent`` run with AutoGen's
``ReplayChatCompletionClient`` making scripted tool calls (no LLM); the tool bodies run in
python-sb's partial mode under their own rule files (issue 15)."""

from __future__ import annotations

import ast
import asyncio
import importlib.util
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
from tests.helpers import require

__all__ = ["web"]  # the fixture


@pytest.fixture(scope="module")
def drive() -> Any:
    require(
        importlib.util.find_spec("autogen_ext") is not None,
        "autogen-ext is not installed (its replay client is the test model: "
        "pip install -e .[agents])",
    )
    sample = load_sample("autogen", "autogen_agentchat")
    from autogen_agentchat.messages import ToolCallExecutionEvent

    def run(calls: list[tuple[str, dict[str, Any]]]) -> list[Outcome]:
        agent = sample.make_agent(sample.scripted_client(calls))
        result = asyncio.run(agent.run(task="scripted"))
        (executed,) = [m for m in result.messages if isinstance(m, ToolCallExecutionEvent)]
        assert [r.call_id for r in executed.content] == [str(i) for i in range(len(calls))]
        # What the model reads: the result's text (a dict's repr) or the error's text.
        return [
            Outcome(True, r.content)
            if r.is_error
            else Outcome(False, json.dumps(ast.literal_eval(r.content)))
            for r in executed.content
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
