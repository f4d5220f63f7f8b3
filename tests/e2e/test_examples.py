"""The bundled example (examples/report) works under python-sb as the README says, on every
provider this machine can run, and its locked rule file refuses what it does not grant."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.providers import get_provider
from tests.helpers import REPO, base_env, require, run_python, run_sb

EXAMPLE = REPO / "examples" / "report"
EXPECTED_TOTAL = "total          668.49"


def _available(name: str) -> bool:
    try:
        return bool(get_provider(name).availability())
    except ConfigError:
        return False


@pytest.mark.parametrize("provider", ["subprocess", "none", "landlock", "bwrap", "unshare"])
def test_report_runs_on_each_provider(provider: str, home: Path) -> None:
    require(_available(provider), f"os-sandbox={provider} cannot run on this machine")
    env = base_env(home, {"OS_SANDBOX": provider})
    result = run_sb(["examples/report/report.py", "examples/report/sales.csv"], cwd=REPO, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "Sales by region"
    assert EXPECTED_TOTAL in result.stdout


def test_report_reads_only_the_granted_variable(home: Path) -> None:
    env = base_env(home, {"OS_SANDBOX": "subprocess", "REPORT_TITLE": "Q3"})
    result = run_sb(["examples/report/report.py", "examples/report/sales.csv"], cwd=REPO, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "Q3"


def test_sibling_script_importing_socket_is_refused(tmp_path: Path, home: Path) -> None:
    """A script next to report.py that opens the network is stopped by the same rule file."""

    copy = tmp_path / "examples" / "report"
    shutil.copytree(EXAMPLE, copy)
    spy = copy / "spy.py"
    spy.write_text(
        "import json, sys\n"
        "import pysandboxes\n"
        "try:\n"
        "    import socket\n"
        "except ImportError as exc:\n"
        "    print(json.dumps([d.to_dict() for d in pysandboxes.sandbox_denials(exc)]))\n"
        "    sys.exit(3)\n"
        "print('connected')\n"
    )
    control = run_python([str(spy)], cwd=tmp_path)
    assert control.returncode == 0 and "connected" in control.stdout
    # The spy needs pysandboxes only to report; grant it so that the only refusal is socket.
    rules = (copy / ".py-sandboxes").read_text()
    (copy / ".py-sandboxes").write_text(
        rules.replace("python-import=collections, csv, os", "python-import=json, sys, pysandboxes")
    )
    env = base_env(home, {"OS_SANDBOX": "subprocess"})
    result = run_sb(["examples/report/spy.py"], cwd=tmp_path, env=env)
    assert result.returncode == 3, result.stderr
    assert '"kind": "import"' in result.stdout and '"target": "socket"' in result.stdout


def test_locked_example_refuses_widening(home: Path) -> None:
    env = base_env(home)
    result = run_sb(
        ["--os-sandbox=none", "examples/report/report.py", "examples/report/sales.csv"],
        cwd=REPO,
        env=env,
    )
    assert result.returncode == 2
    assert "learn=false" in result.stderr and result.stdout == ""
