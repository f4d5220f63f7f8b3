"""The CrewAI sample (examples/agents/crewai): its crew run with a scripted LLM that makes the
tool calls in CrewAI's ReAct format (no LLM), in CrewAI's own venv (``.venv/crewai``, made by
``examples/agents/crewai/make-venv.sh``; ``PYSANDBOXES_CREWAI_PYTHON`` points elsewhere); the
tool bodies run in python-sb's partial mode under their own rule files (issue 15)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agent_samples_support import (
    Outcome,
    Web,
    check_normal_calls,
    check_refused_evaluations,
    check_refused_hosts,
    check_timeout,
    web_servers,
)
from tests.helpers import REPO, require

__all__ = ["web_servers"]  # the fixture
DRIVER = Path(__file__).parent / "programs" / "agent_samples" / "crewai_driver.py"
DEFAULT = str(REPO / ".venv" / "crewai" / "bin" / "python")  # scripts/setup.sh makes it


@pytest.fixture(scope="module")
def drive() -> Any:
    python = os.environ.get("PYSANDBOXES_CREWAI_PYTHON", DEFAULT)
    probe = (
        subprocess.run([python, "-c", "import crewai"], capture_output=True, check=False)
        if Path(python).exists()
        else None
    )
    require(
        probe is not None and probe.returncode == 0,
        f"no interpreter with crewai at {python} (examples/agents/crewai/make-venv.sh, then "
        "PYSANDBOXES_CREWAI_PYTHON)",
    )

    def run(calls: list[tuple[str, dict[str, Any]]]) -> list[Outcome]:
        proc = subprocess.run(
            [python, str(DRIVER), json.dumps(calls)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        return [Outcome(o["error"], o["text"]) for o in json.loads(proc.stdout.splitlines()[-1])]

    return run


def test_normal_calls_run_in_the_sandbox(drive: Any, web_servers: Web) -> None:
    check_normal_calls(drive, web_servers)


def test_refused_hosts_reach_the_model(drive: Any, web_servers: Web) -> None:
    check_refused_hosts(drive, web_servers)


def test_refused_evaluations(drive: Any, web_servers: Web) -> None:
    check_refused_evaluations(drive, web_servers)


def test_timeout(drive: Any, web_servers: Web) -> None:
    check_timeout(drive, web_servers)
