"""Fixes of the red-team review's network findings (tests/redteam/review, ``net_*``), and the
sensitive calls it found missing from the registry: one test per fix, through an armed
interpreter. Traffic goes to loopback listeners of the test only; a refusal happens before any
packet leaves.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import require
from tests.unit.guard.harness import run_armed


def test_sethostname_is_a_privileges_call(tmp_path: Path) -> None:
    """``socket.sethostname`` raises its own audit event: refused without ``privileges``."""

    require(os.geteuid() == 0, "sethostname needs root (the allowed run really sets it)")
    code = """
import socket
name = socket.gethostname()
try:
    socket.sethostname(name)
    print("set")
except PermissionError as exc:
    print("refused", type(exc).__name__, exc.denial.target, exc.denial.detail)
"""
    refused = run_armed(code, "python-import=*\n", tmp_path)
    assert refused.lines == ["refused RuleApiPermissionError socket.sethostname privileges"], (
        refused.stdout + refused.stderr
    )
    allowed = run_armed(code, "python-import=*\npython-api=ALLOW:socket.sethostname\n", tmp_path)
    assert allowed.lines == ["set"], allowed.stdout + allowed.stderr


@pytest.mark.xfail(
    strict=True,
    reason="registry entries only: CPython 3.11 raises no event for these functions and "
    "guard/wrappers.py (another owner) does not wrap them yet",
)
def test_scheduling_and_pidfd_signals_are_process_control(tmp_path: Path) -> None:
    """``os.setpriority``, ``os.sched_set*`` and ``signal.pidfd_send_signal`` act on another
    process like ``os.kill``: refused without ``process-control`` (here on the program itself,
    harmless values)."""

    code = """
import os, signal
P = os.PRIO_PROCESS
calls = [
    ("os.setpriority", lambda: os.setpriority(P, 0, os.getpriority(P, 0))),
    ("os.sched_setaffinity", lambda: os.sched_setaffinity(0, os.sched_getaffinity(0))),
    ("os.sched_setscheduler", lambda: os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))),
    ("os.sched_setparam", lambda: os.sched_setparam(0, os.sched_param(0))),
    ("signal.pidfd_send_signal", lambda: signal.pidfd_send_signal(os.pidfd_open(os.getpid()), 0)),
]
for name, call in calls:
    try:
        call()
        print(name, "ran")
    except PermissionError as exc:
        print(name, "refused", exc.denial.target)
"""
    result = run_armed(code, "python-import=*\n", tmp_path)
    names = [
        "os.setpriority",
        "os.sched_setaffinity",
        "os.sched_setscheduler",
        "os.sched_setparam",
        "signal.pidfd_send_signal",
    ]
    assert result.lines == [f"{name} refused {name}" for name in names], (
        result.stdout + result.stderr
    )
