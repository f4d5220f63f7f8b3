"""Test helpers: run the real ``python-sb`` command, and skip-or-fail on missing tools.

``PYSANDBOXES_REQUIRE_ALL=1`` (set by ``.ci/run``) turns every "tool or kernel feature missing"
skip into a failure, so CI cannot pass by skipping the tests that matter.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: The real console script installed in the test environment.
PYTHON_SB = str(Path(sys.executable).with_name("python-sb"))


def _interpreter_of(script: str) -> str:
    """The interpreter named by ``script``'s shebang (``python`` or ``python3`` of the venv,
    depending on the installer): plain-python controls must run the same one, or their
    ``sys.executable``/``orig_argv`` would differ from python-sb's child for that reason alone."""

    try:
        with open(script, "rb") as handle:
            first = handle.readline().decode(errors="replace").strip()
    except OSError:
        return sys.executable
    if first.startswith("#!") and " " not in first[2:].strip():
        candidate = first[2:].strip()
        if Path(candidate).exists():
            return candidate
    return sys.executable


PYTHON = _interpreter_of(PYTHON_SB)
REQUIRE_ALL = os.environ.get("PYSANDBOXES_REQUIRE_ALL") == "1"
#: The portable paths forced for the whole run (``PYSANDBOXES_PORTABLE``, src/pysandboxes/
#: platform_caps.py): every python-sb a test starts gets the switch too.
PORTABLE = os.environ.get("PYSANDBOXES_PORTABLE", "")
#: The audit hook's compiled accelerator chosen for the whole run (``PYSANDBOXES_ACCELERATOR``,
#: src/pysandboxes/guard/accelerator.py; scripts/test.sh runs the corpora with ``off`` too).
ACCELERATOR = os.environ.get("PYSANDBOXES_ACCELERATOR", "")
#: The switches of the test run that every python-sb a test starts gets (unless it sets its own).
SWITCHES = {
    name: value
    for name, value in (
        ("PYSANDBOXES_PORTABLE", PORTABLE),
        ("PYSANDBOXES_ACCELERATOR", ACCELERATOR),
    )
    if value
}


def with_portable(env: Mapping[str, str] | None) -> dict[str, str] | None:
    """``env`` with the switches of the test run added (:data:`SWITCHES`: the forced portable
    paths, the accelerator's choice), unless it sets its own."""

    if env is None:
        return None
    return {**SWITCHES, **env}


def require(condition: object, reason: str) -> None:
    """Skip the test with ``reason`` unless ``condition``; fail instead under REQUIRE_ALL."""

    if condition:
        return
    if PORTABLE:  # the portable paths forced: Linux's features are absent by design
        pytest.skip(f"{reason} [PYSANDBOXES_PORTABLE={PORTABLE}]")
    if REQUIRE_ALL:
        pytest.fail(f"required for CI (PYSANDBOXES_REQUIRE_ALL=1): {reason}")
    pytest.skip(reason)


def require_tool(name: str, package: str | None = None) -> str:
    """The path of system tool ``name``, or skip/fail saying which package provides it."""

    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    require(path, f"{name} not found on PATH (apt-get install {package or name})")
    assert path is not None
    return path


def base_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A small, predictable environment for the command under test, with its own HOME."""

    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
    }
    env.update(SWITCHES)
    if extra:
        env.update(extra)
    return env


def run_sb(
    args: Sequence[str],
    *,
    cwd: Path | str,
    env: Mapping[str, str] | None = None,
    input: str | bytes | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run the real ``python-sb`` with ``args``; text output captured."""

    data = input.decode() if isinstance(input, bytes) else input
    return subprocess.run(
        [PYTHON_SB, *args],
        cwd=str(cwd),
        env=with_portable(env),
        input=data,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_python(
    args: Sequence[str],
    *,
    cwd: Path | str,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run plain CPython (the control of every attack, the reference of every launcher test)."""

    return subprocess.run(
        [PYTHON, *args],
        cwd=str(cwd),
        env=dict(env) if env is not None else None,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def loopback_host_name() -> str | None:
    """A name ``/etc/hosts`` gives to 127.0.0.1 other than ``localhost`` (the red-team corpora's
    host-name attacks need one that resolves without any DNS query), or ``None``."""

    try:
        text = Path("/etc/hosts").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        parts = line.split("#", 1)[0].split()
        if len(parts) >= 2 and parts[0] == "127.0.0.1":
            for name in parts[1:]:
                if name not in ("localhost", "localhost.localdomain"):
                    return name
    return None


def pty_session(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    respond: Callable[[bytes], bytes | None],
    timeout: float,
) -> tuple[bytes, int]:
    """Run ``argv`` on a new terminal; after each read, write what ``respond(output so far)``
    returns (``None``: nothing). The output and the wait status; a session still running at
    ``timeout`` is killed, never left behind."""

    import pty
    import select
    import time

    pid, master = pty.fork()
    if pid == 0:  # the child: the command with the pty as its terminal
        os.chdir(cwd)
        os.execve(argv[0], argv, env)
    output = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        reply = respond(output)
        if reply:
            os.write(master, reply)
    else:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return output, status


def typing_keys(keys: list[bytes], prompt: bytes) -> Callable[[bytes], bytes | None]:
    """Type ``keys`` one by one, each after the next ``prompt`` appears."""

    pending = list(keys)

    def respond(output: bytes) -> bytes | None:
        if pending and output.count(prompt) > len(keys) - len(pending):
            return pending.pop(0)
        return None

    return respond


#: A program that says ``ready`` and waits: for signal tests.
WAITING_PROGRAM = "import time\nprint('ready', flush=True)\ntime.sleep(60)\n"


def signalled(argv: list[str], signum: int, cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """Run ``argv -c WAITING_PROGRAM``, send ``signum`` once it is ready: its return code (as
    ``subprocess`` gives it) and its stderr."""

    proc = subprocess.Popen(
        [*argv, "-c", WAITING_PROGRAM],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    return proc.returncode, err
