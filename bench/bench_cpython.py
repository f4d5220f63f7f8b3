"""CPython's own test modules under python-sb (``os-sandbox=subprocess``) against plain python3.

Issue 29's row: ``python -m test MODULE`` for ``test_json``, ``test_pathlib``, ``test_decimal``
and ``test_tarfile``, alternated run by run with the same command under ``python-sb`` and a rule
file that grants everything the rule language can (the comparison of issue 27: with every
right granted, what remains is the Python layer's own cost -- its events, wrappers and checks),
as medians of the wall clock and of the CPU time (user + system of the processes waited for).
Goal: <= x1.15 each. The modules take seconds to a minute each: ``--runs 3`` is plenty.

``BENCH_BASELINE_SB`` naming another ``python-sb`` (an unmodified checkout's venv) adds it as a
third side, alternated with the other two in the same runs: its ratio to python3 is reported
next to this checkout's, and ``vs baseline`` is this checkout's time over its.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cases import PYTHON3, PYTHON_SB

MODULES = ("test_json", "test_pathlib", "test_decimal", "test_tarfile")
GOAL = 1.15
BASELINE_SB = os.environ.get("BENCH_BASELINE_SB")


def setup(workdir: Path) -> None:
    """The permissive rule file (``os-sandbox=subprocess``), the working directory writable
    (regrtest's ``test_python_*`` directories)."""

    (workdir / "cpython.py-sandboxes").write_text(
        "\n".join(
            (
                "os-sandbox=subprocess",
                "python-import=*",
                "python-api=ALLOW:*",
                "expose-ro=/",
                f"expose-rw={workdir}",
                "env=*=${*}",
                "net=ALLOW|*|*|*|*",
                "",
            )
        )
    )


def _timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv)} ended with {proc.returncode}:\n"
            + proc.stdout.decode(errors="replace")[-1500:]
        )
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def _module(name: str) -> Callable[[Path, int], dict[str, Any]]:
    def measure(workdir: Path, runs: int) -> dict[str, Any]:
        rules = workdir / "cpython.py-sandboxes"
        plain = [PYTHON3, "-m", "test", name]
        guarded = [PYTHON_SB, f"--pysandboxes-config={rules}", "-m", "test", name]
        commands = {"python3": plain, "python-sb": guarded}
        if BASELINE_SB:
            commands["baseline"] = [BASELINE_SB, *guarded[1:]]
        sides: dict[str, list[tuple[float, float]]] = {side: [] for side in commands}
        for _ in range(max(1, min(runs, 5))):  # alternate, so drift hits every side alike
            for side, argv in commands.items():
                sides[side].append(_timed(argv, workdir))
        wall = {k: statistics.median(s[0] for s in v) for k, v in sides.items()}
        cpu = {k: statistics.median(s[1] for s in v) for k, v in sides.items()}
        ratio, cpu_ratio = wall["python-sb"] / wall["python3"], cpu["python-sb"] / cpu["python3"]
        figure = f"{name} x{ratio:.2f} (cpu x{cpu_ratio:.2f}; python3 {wall['python3']:.1f} s)"
        if BASELINE_SB:
            base, base_cpu = wall["baseline"] / wall["python3"], cpu["baseline"] / cpu["python3"]
            figure += (
                f"; baseline x{base:.2f} (cpu x{base_cpu:.2f}); vs baseline"
                f" x{wall['python-sb'] / wall['baseline']:.2f}"
                f" (cpu x{cpu['python-sb'] / cpu['baseline']:.2f})"
            )
        met = ratio <= GOAL
        return {
            "name": f"CPython's {name}: python-sb (subprocess) / python3",
            "kind": "value",
            "value": f"{figure}  goal <= x{GOAL}: {'ok' if met else 'MISSED'}",
            "unit": "",
            "issue29": {"cpython": (figure, f"<= x{GOAL} each", met)},
            "wall_s": wall,
            "cpu_s": cpu,
        }

    return measure


CASES: list[Any] = [_module(name) for name in MODULES]
