"""Attacks only a separate process can hold: one long C call, memory the estimates miss.

They run through the ``worker`` backend (a warm partial-mode worker, killed at the timeout and
replaced) and the ``fork`` backend (a child per call, killed at the timeout, address space
limited). Each has a control: plain exec of the same source in a child python is still
running after one second (or runs out of a 512 MiB address space).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time

import pytest

from pysandboxes import sandbox_denials
from pysandboxes.errors import EvalAttributeDenied, EvalMemoryError, EvalTimeout
from pysandboxes.evalguard.api import guarded_eval
from tests.redteam.eval.deadlines import scaled

RULES = [
    "eval-syntax=arith,compare,import,assign,comprehension,loop",
    "eval-import=re,fractions",
    "eval-call=sum,range,len,print,getattr",
    "eval-timeout=500ms",
]
BACKTRACK = "import re\nre.match('(a+)+$', 'a' * 32 + 'b')"
GROWTH = "rows = [[0] * 10**4 for _ in range(10**5)]"


def _plain_child(source: str, timeout: float, memory: bool = False) -> None:
    def limit() -> None:
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))

    subprocess.run(
        [sys.executable, "-c", source],
        timeout=timeout,
        capture_output=True,
        check=False,
        preexec_fn=limit,
    )


def test_control_backtracking_runs_long() -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        _plain_child(BACKTRACK, 1.0)


BACKENDS = ["worker", "fork"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_long_c_call_is_killed_at_the_timeout(backend: str) -> None:
    start = time.monotonic()
    with pytest.raises(EvalTimeout, match="killed"):
        guarded_eval(BACKTRACK, mode="exec", rules=RULES, backend=backend)
    assert time.monotonic() - start < 10
    # the caller's process goes on: the next evaluation works (a new worker; its deadline
    # follows the load, deadlines.py)
    assert guarded_eval("6 * 7", rules=scaled(RULES), backend=backend) == 42


def test_control_growth_runs_out_of_memory() -> None:
    done = subprocess.run(
        [sys.executable, "-c", GROWTH],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20)),
    )
    assert "MemoryError" in done.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_memory_growth_is_bounded_in_the_child(backend: str) -> None:
    # the default 2s (time to grow, even on a slow machine), following the load (deadlines.py:
    # at load 6 on 2 cores the growth ran past 2 s, EvalTimeout instead of EvalMemoryError)
    rules = scaled(
        [line for line in RULES if not line.startswith("eval-timeout")] + ["eval-timeout=2s"]
    )
    with pytest.raises(EvalMemoryError):
        guarded_eval(GROWTH, mode="exec", rules=rules, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_results_and_refusals_cross_back(backend: str) -> None:
    rules = scaled(RULES)  # none of these outcomes is the deadline: it follows the load
    bound = guarded_eval(
        "import fractions\nr = fractions.Fraction(1, 3)\nd = [1, {2: (3, 4.5)}]",
        mode="exec",
        rules=rules,
        backend=backend,
    )
    assert bound == {"r": __import__("fractions").Fraction(1, 3), "d": [1, {2: (3, 4.5)}]}
    with pytest.raises(EvalAttributeDenied) as info:
        guarded_eval("getattr(1, '__class__')", rules=rules, backend=backend)
    assert sandbox_denials(info.value)[0].kind == "eval"
    with pytest.raises(ZeroDivisionError):
        guarded_eval("1 / 0", rules=rules, backend=backend)
    with pytest.raises(EvalTimeout, match="iterations"):
        guarded_eval("sum(range(10**12))", rules=rules, backend=backend)


def test_worker_is_warm() -> None:
    from pysandboxes.evalguard.api import resolve
    from pysandboxes.evalguard.worker import WORKER

    guarded_eval("1 + 1", rules=RULES, backend="worker")
    pid = WORKER.pid(resolve(None, RULES))
    assert pid > 0
    for n in range(20):
        assert guarded_eval("n * 2", names={"n": n}, rules=RULES) == n * 2  # the default
    assert WORKER.pid(resolve(None, RULES)) == pid  # no process per call
