"""Processes that outlive their worker (issue 25 class 6): a ``@sandbox`` function starts a
``setsid`` daemon (forked twice: neither its process group, its session nor its parent's death
holds it); it must not survive the call's timeout, nor the end of the ``with`` block, under
every provider that runs a worker (subprocess, landlock, bwrap, unshare), whichever way its
processes are held (``launch/spawn.py``: the provider's own PID namespace, a PID namespace of
the worker's own, or a child subreaper where user namespaces do not work, forced here with
``PYSANDBOXES_PROCESS_TREE=subreaper``).

The daemon is found by a marker word in its command line, in the host's ``/proc`` (which shows
the processes of every PID namespace below it): no timing is judged, only whether it is gone
within a generous bound. The control runs the same function in a plain child process, SIGKILLed
or ending, and the daemon stays (then the test kills it).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from pysandboxes.providers import get_provider
from tests.helpers import PYTHON, base_env, require

HOST = Path(__file__).with_name("daemon_host.py")
PROVIDERS = ["subprocess", "landlock", "bwrap", "unshare"]
#: (provider, forced mechanism) cells: each provider as it is, and the subreaper fallback
#: where the launcher (not the provider) holds the worker's processes.
CELLS = [(p, "") for p in PROVIDERS] + [("subprocess", "subreaper"), ("landlock", "subreaper")]
GONE_WITHIN = 30.0


def _daemons(marker: str) -> list[int]:
    """Live processes (not zombies) whose command line holds ``marker``."""

    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_bytes().rpartition(b")")[2].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline.split(b"\0") and state != b"Z":
            found.append(int(entry))
    return found


def _still_there_after(marker: str, seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while True:
        left = _daemons(marker)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _run(tmp_path: Path, provider: str, mode: str, *, forced: str = "", control: bool = False):
    rules = tmp_path / "rules.py-sandboxes"
    rules.write_text(
        f"learn=false\npy-sandbox=false\nos-sandbox={provider}\nexpose-ro={HOST.parent}\n"
    )
    marker = f"pysb-tree-{uuid.uuid4().hex}"
    extra = {"PYSANDBOXES_PROCESS_TREE": forced} if forced else {}
    proc = subprocess.run(
        [PYTHON, str(HOST), str(rules), mode, marker, *(["control"] if control else [])],
        cwd=tmp_path,
        env=base_env(tmp_path, extra),
        capture_output=True,
        text=True,
        timeout=180,
    )
    return proc, marker


@pytest.mark.parametrize(("provider", "forced"), CELLS)
@pytest.mark.parametrize("mode", ["timeout", "end"])
def test_a_setsid_daemon_ends_with_its_worker(
    tmp_path: Path, provider: str, forced: str, mode: str
) -> None:
    state = get_provider(provider).availability()
    require(state.ok, f"os-sandbox={provider}: {state.reason} ({state.install_hint})")
    proc, marker = _run(tmp_path, provider, mode, forced=forced)
    try:
        assert proc.returncode == 0, proc.stderr[-3000:]
        report = json.loads(proc.stdout)
        expected = "CallTimeoutError" if mode == "timeout" else "started"
        assert report["outcome"] == expected, proc.stderr[-3000:]
        left = _still_there_after(marker, GONE_WITHIN)
        assert left == [], f"the daemon outlived its worker ({mode}): {left}"
        if forced or provider in ("subprocess", "landlock"):
            said = "child subreaper" if forced else "in a PID namespace of its own"
            assert said in proc.stderr  # the mechanism is said at start
    finally:
        _kill(_daemons(marker))


@pytest.mark.parametrize("mode", ["timeout", "end"])
def test_where_only_a_process_group_holds_them_the_limit_is_said(tmp_path: Path, mode: str) -> None:
    """Without a PID namespace or a subreaper (macOS, Windows; forced here) a daemon that left
    the worker's process group can outlive it: an announced limit, said at start."""

    proc, marker = _run(tmp_path, "subprocess", mode, forced="process-group")
    try:
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "can outlive the worker" in proc.stderr
        assert _daemons(marker)  # the limit is real: the setsid daemon left the group
    finally:
        _kill(_daemons(marker))


@pytest.mark.parametrize("mode", ["timeout", "end"])
def test_control_the_daemon_outlives_a_plain_process(tmp_path: Path, mode: str) -> None:
    """Without the sandbox: the process that started it SIGKILLed, or ended, the daemon runs."""

    proc, marker = _run(tmp_path, "subprocess", mode, control=True)
    try:
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert _daemons(marker), "the control's daemon did not start"
        time.sleep(1)  # (not judged: it is still there after its parent's end)
        assert _daemons(marker)
    finally:
        _kill(_daemons(marker))
