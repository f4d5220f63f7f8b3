"""The signal relay of ``os-sandbox=bwrap`` (``providers/bwrap_signals.py``), on real bubblewrap.

The end-to-end checks through ``python-sb`` (kill, Ctrl-C, REPL) are in
``tests/e2e/test_bwrap_e2e.py``; these drive the relay directly, to reach the cases a command
line cannot time: a signal before the program exists, after the sandbox ended, a bubblewrap
that failed before reporting anything.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from pysandboxes.policy.model import ARG, PathRule, Policy
from pysandboxes.providers import get_provider
from pysandboxes.providers.base import Launch, Prepared
from pysandboxes.providers.bwrap_signals import (
    BwrapSignalRelay,
    children_of,
    is_running,
    parse_child_pid,
)
from pysandboxes.runtime import RunContext
from tests.helpers import require

HANDLER = """
import signal, sys, time
signal.signal(signal.SIGTERM, lambda *a: sys.exit(3))
time.sleep(30)
"""


def test_parse_child_pid() -> None:
    info = b'{\n    "child-pid": 21099,\n    "mnt-namespace": 4026532178\n}\n'
    assert parse_child_pid(info) == 21099
    assert parse_child_pid(b'{"child-pid":7}') == 7
    assert parse_child_pid(b"") is None
    assert parse_child_pid(b'{"child-pid": "x"}') is None
    assert parse_child_pid(b'{"mnt-namespace": 5}') is None


def test_children_and_running() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert proc.pid in children_of(os.getpid())
        assert is_running(proc.pid)
    finally:
        proc.kill()
    # Killed but not yet reaped: a zombie is not running.
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    assert not is_running(proc.pid)
    proc.wait()
    assert not is_running(proc.pid)
    assert children_of(proc.pid) == []


def _prepare(tmp_path: Path, code: str) -> Prepared:
    impl = get_provider("bwrap")
    state = impl.availability()
    require(state.ok, f"os-sandbox=bwrap: {state.reason} ({state.install_hint})")
    ctx = RunContext(
        provider="bwrap",
        cwd=str(tmp_path),
        tmpdir=str(tmp_path),
        python=sys.executable,
        prefixes=(sys.prefix, sys.base_prefix),
    )
    policy = Policy(expose_ro=(PathRule("expose-ro", str(tmp_path), ARG),))
    launch = Launch(
        policy,
        ctx,
        (sys.executable, "-I", "-c", code),
        {"PATH": "/usr/bin:/bin"},
        cwd=str(tmp_path),
    )
    prepared: Prepared = impl.prepare(launch)
    assert prepared.needs_parent and isinstance(prepared.relay, BwrapSignalRelay)
    return prepared


def _start(prepared: Prepared) -> subprocess.Popen[bytes]:
    assert prepared.relay is not None
    proc = subprocess.Popen(
        prepared.argv, env=prepared.env, pass_fds=prepared.pass_fds, process_group=0
    )
    prepared.relay.started(proc.pid)
    return proc


def _release(prepared: Prepared) -> None:
    assert isinstance(prepared.relay, BwrapSignalRelay)
    prepared.relay.close()
    for fd in prepared.pass_fds:  # the seccomp filter and the generated files
        if fd != prepared.relay.info_fd:
            with contextlib.suppress(OSError):
                os.close(fd)


def test_a_signal_before_the_program_exists_waits_for_it(tmp_path: Path) -> None:
    prepared = _prepare(tmp_path, HANDLER)
    relay = prepared.relay
    assert isinstance(relay, BwrapSignalRelay)
    try:
        proc = _start(prepared)
        # bubblewrap is still building the sandbox: the relay waits for the program to exist.
        relay.deliver(signal.SIGTERM, False)
        assert proc.wait(timeout=30) in (3, 128 + signal.SIGTERM)  # not -15: bwrap lived on
        program = relay.program()
        assert program is not None and program != proc.pid
    finally:
        _release(prepared)


def test_the_program_is_the_one_signalled(tmp_path: Path) -> None:
    prepared = _prepare(tmp_path, "import os; print(os.getpid(), flush=True); " + HANDLER)
    relay = prepared.relay
    assert isinstance(relay, BwrapSignalRelay)
    try:
        proc = subprocess.Popen(
            prepared.argv,
            env=prepared.env,
            pass_fds=prepared.pass_fds,
            process_group=0,
            stdout=subprocess.PIPE,
        )
        relay.started(proc.pid)
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"2\n"  # PID 2 inside: the handler is installed next
        program = relay.program()
        assert program is not None
        with open(f"/proc/{program}/cmdline", "rb") as handle:
            assert b"signal.SIGTERM" in handle.read()  # the interpreter, not bwrap's reaper
        relay.deliver(signal.SIGTERM, True)  # as the terminal: to the program's group
        assert proc.wait(timeout=30) in (3, 128 + signal.SIGTERM)
        proc.stdout.close()
    finally:
        _release(prepared)


def test_after_the_sandbox_ended_nothing_is_sent(tmp_path: Path) -> None:
    prepared = _prepare(tmp_path, "pass")
    relay = prepared.relay
    assert isinstance(relay, BwrapSignalRelay)
    try:
        proc = _start(prepared)
        assert proc.wait(timeout=30) == 0
        assert relay.program() is None
        relay.deliver(signal.SIGTERM, False)  # no error, nobody signalled
    finally:
        _release(prepared)


def test_bwrap_that_reports_nothing(tmp_path: Path) -> None:
    """bubblewrap refusing its command line writes no info: end of file, no program, no hang."""

    relay = BwrapSignalRelay()
    try:
        proc = subprocess.Popen(
            ["bwrap", "--no-such-option", "--info-fd", str(relay.info_fd), "true"],
            pass_fds=(relay.info_fd,),
            stderr=subprocess.DEVNULL,
        )
        relay.started(proc.pid)
        assert proc.wait(timeout=30) != 0
        assert relay.program() is None
        relay.deliver(signal.SIGINT, True)
    finally:
        relay.close()
        relay.close()  # idempotent
