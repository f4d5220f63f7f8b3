"""``python-sb --os-sandbox=bwrap`` end to end: statuses and signals as bubblewrap passes them.

bubblewrap reports a program killed by signal N as exit status 128+N, and does not forward the
signals it receives: a SIGTERM sent to python-sb (which became bwrap) ends bwrap with SIGTERM
and the program with it (``--die-with-parent``). ``docs/providers/bwrap.md`` says so.
"""

from __future__ import annotations

import signal
import uuid
from pathlib import Path

import pytest

from tests.e2e.test_unshare_e2e import processes_with, provider_ok, start, wait_gone, write_program
from tests.helpers import base_env, run_sb


@pytest.mark.parametrize("code", [0, 5])
def test_exit_status_passes_through(project: Path, home: Path, code: int) -> None:
    provider_ok("bwrap")
    write_program(project)
    result = run_sb(
        ["--os-sandbox=bwrap", "--py-sandbox=false", "prog.py", "status", str(code)],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == code, result.stderr
    assert result.stdout.startswith("ready 2")


def test_signal_death_is_128_plus_n(project: Path, home: Path) -> None:
    provider_ok("bwrap")
    write_program(project)
    result = run_sb(
        ["--os-sandbox=bwrap", "--py-sandbox=false", "prog.py", "segv"],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == 128 + signal.SIGSEGV


def test_sigterm_ends_the_sandbox_and_leaves_no_process(project: Path, home: Path) -> None:
    provider_ok("bwrap")
    write_program(project)
    marker = f"marker-{uuid.uuid4().hex}"
    proc = start("bwrap", project, home, "wait", marker=marker)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("ready")
    assert processes_with(marker)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGTERM
    assert wait_gone(marker) == []


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_python_layer_and_kernel_layer_together(project: Path, home: Path, provider: str) -> None:
    """With the Python layer on (the default), the guarded child starts inside the namespace
    sandbox: it refuses by rule, and the kernel layer holds what the guard would not see."""

    provider_ok(provider)
    (project / ".py-sandboxes").write_text(f"expose-ro={project}\npython-import=*\n")
    (project / "prog.py").write_text(
        "import os, socket, sys\n"
        "from pysandboxes import sandbox_denials\n"
        "try:\n"
        "    socket.create_connection(('127.0.0.1', 9))\n"
        "except OSError as exc:\n"
        "    print('refused', [d.kind for d in sandbox_denials(exc)])\n"
        "print('pid', os.getpid(), 'hidden', os.path.exists(sys.argv[1]))\n"
        "sys.exit(6)\n"
    )
    result = run_sb(
        [f"--os-sandbox={provider}", "prog.py", str(home)],
        cwd=project,
        env=base_env(home),
        timeout=60,
    )
    assert result.returncode == 6, result.stderr
    assert "refused ['net']" in result.stdout
    assert "pid 2 hidden False" in result.stdout  # own PID namespace; HOME is not in the tree
