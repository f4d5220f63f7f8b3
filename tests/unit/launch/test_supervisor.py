"""The supervisor (python-sb staying as a parent): exit status, death by the child's signal,
signals sent to python-sb forwarded once, the exit callbacks run on every path.

Each case runs a small driver process that supervises a real child interpreter, so that signals
and the driver's own death can be observed from outside.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

DRIVER = textwrap.dedent(
    """
    import os, sys
    from pysandboxes.launch.supervisor import supervise
    from pysandboxes.providers.base import Prepared

    marker, program = sys.argv[1], sys.argv[2]
    prepared = Prepared(argv=[sys.executable, "-c", program], env=dict(os.environ))
    prepared.cleanup.append(lambda: open(marker + ".cleanup", "w").close())
    def on_exit(status):
        with open(marker, "w") as handle:
            handle.write(repr(status))
    portable = os.environ.get("PORTABLE") == "1"
    sys.exit(supervise(prepared, on_exit=[on_exit], portable=portable))
    """
)


def drive(tmp_path: Path, program: str, *, portable: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(tmp_path / "status"), program],
        env={**os.environ, "PORTABLE": "1" if portable else "0"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_exit_status_passes_through(tmp_path: Path) -> None:
    proc = drive(tmp_path, "print('out'); raise SystemExit(7)")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 7, err
    assert out == "out\n"
    assert (tmp_path / "status").read_text() == "7"
    assert (tmp_path / "status.cleanup").exists()


@pytest.mark.parametrize("portable", [False, True], ids=["sigwaitinfo", "portable"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_forwarded_and_death_reproduced(tmp_path: Path, signum: int, portable: bool) -> None:
    program = "import time; print('ready', flush=True); time.sleep(60)"
    proc = drive(tmp_path, program, portable=portable)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signum)
    proc.wait(timeout=30)
    assert proc.returncode == -signum  # the supervisor dies by the child's signal
    assert (tmp_path / "status").read_text() == repr(-signum)
    assert (tmp_path / "status.cleanup").exists()


def test_program_handling_the_signal_decides(tmp_path: Path) -> None:
    program = textwrap.dedent(
        """
        import signal, sys, time
        signal.signal(signal.SIGTERM, lambda *a: sys.exit(42))
        print('ready', flush=True)
        time.sleep(60)
        """
    )
    proc = drive(tmp_path, program)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    assert proc.returncode == 42


def test_child_killed_by_sigkill(tmp_path: Path) -> None:
    program = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    proc = drive(tmp_path, program)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert (tmp_path / "status").read_text() == repr(-signal.SIGKILL)


def test_exec_failure_is_reported(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-interpreter")
    driver = DRIVER.replace("argv=[sys.executable,", f"argv=[{missing!r},")
    proc = subprocess.run(
        [sys.executable, "-c", driver, str(tmp_path / "status"), "pass"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 127
    assert "cannot start the sandboxed program" in proc.stderr
    assert os.path.exists(tmp_path / "status.cleanup")


def test_forwarding_decision() -> None:
    from pysandboxes.launch.supervisor import SI_KERNEL, should_forward

    assert should_forward(0, 1234, 999)  # kill(2) from another process: SI_USER
    assert should_forward(-1, 1234, 999)  # sigqueue: SI_QUEUE
    assert not should_forward(SI_KERNEL, 0, 999)  # the terminal: the child got it too
    assert not should_forward(0, 999, 999)  # the child signalling its parent
