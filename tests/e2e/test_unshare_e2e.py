"""``python-sb --os-sandbox=unshare`` end to end: statuses, signals, no process left behind.

(``test_bwrap_e2e.py`` holds the same checks for bwrap, where python-sb delivers the signals.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import PYTHON_SB, base_env, require, run_sb

PROGRAM = """
import os, signal, sys, time
def on_term(signum, frame):
    os.write(1, b"caught %d\\n" % signum)
    sys.exit(3)
signal.signal(signal.SIGTERM, on_term)
print("ready", os.getpid(), flush=True)
mode = sys.argv[1]
if mode == "status":
    sys.exit(int(sys.argv[2]))
if mode == "segv":
    os.kill(os.getpid(), signal.SIGSEGV)
if mode == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
while True:
    time.sleep(1)
"""


def provider_ok(name: str) -> None:
    from pysandboxes.providers import get_provider

    state = get_provider(name).availability()
    require(state.ok, f"os-sandbox={name}: {state.reason} ({state.install_hint})")


def processes_with(marker: str) -> list[int]:
    """Host PIDs of the processes whose environment holds ``marker`` (given by an env= rule)."""

    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if marker.encode() in handle.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def wait_gone(marker: str, limit: float = 20.0) -> list[int]:
    """Poll (bounded) until no process carries ``marker``; the survivors, if any."""

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        left = processes_with(marker)
        if not left:
            return []
        time.sleep(0.05)
    return processes_with(marker)


def write_program(project: Path) -> Path:
    (project / ".py-sandboxes").write_text(f"expose-ro={project}\n")
    path = project / "prog.py"
    path.write_text(PROGRAM)
    return path


def start(
    provider: str, project: Path, home: Path, *args: str, marker: str = "none"
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            PYTHON_SB,
            f"--os-sandbox={provider}",
            "--py-sandbox=false",
            f"--env=PYSB_TEST_MARKER={marker}",
            "prog.py",
            *args,
        ],
        cwd=project,
        env=base_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("code", [0, 5])
def test_exit_status_passes_through(project: Path, home: Path, code: int) -> None:
    provider_ok("unshare")
    write_program(project)
    result = run_sb(
        ["--os-sandbox=unshare", "--py-sandbox=false", "prog.py", "status", str(code)],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == code, result.stderr
    assert result.stdout.startswith("ready 2")  # PID 2 in its own namespace


def test_killed_by_a_signal_ends_with_that_signal(project: Path, home: Path) -> None:
    provider_ok("unshare")
    write_program(project)
    result = run_sb(
        ["--os-sandbox=unshare", "--py-sandbox=false", "prog.py", "segv"],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == -signal.SIGSEGV


#: A rule that gives the run a network (pasta and a ruleset: python-sb stays as the parent).
NET_RULE = "--net=ALLOW|TCP|*|9|OUT"


@pytest.mark.parametrize("network", [False, True], ids=["no-net", "net"])
def test_killed_by_sigkill_ends_with_sigkill(project: Path, home: Path, network: bool) -> None:
    """Issue 26, defect 2: SIGKILL's disposition cannot be reset; the setup step tried, and
    python-sb said "[Errno 22] Invalid argument" (no net=) or a traceback (net=)."""

    provider_ok("unshare")
    write_program(project)
    more = [NET_RULE] if network else []
    result = run_sb(
        ["--os-sandbox=unshare", "--py-sandbox=false", *more, "prog.py", "kill"],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == -signal.SIGKILL, result.stderr
    assert "Error" not in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_sigterm_reaches_the_program(project: Path, home: Path) -> None:
    provider_ok("unshare")
    write_program(project)
    proc = start("unshare", project, home, "wait")
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("ready")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert "caught 15" in out, err
    assert proc.returncode == 3
