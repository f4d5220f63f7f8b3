"""Real test suites under each provider, as a ratio to plain python in the same run (issue 12).

For each project of ``tests/realworld/sdists.txt`` that ``scripts/setup.sh`` fetched (the same
pinned sdists and pytest arguments as ``tests/realworld/test_sdists.py``): the sdist is unpacked
once, its suite learned once with ``python-sb --learn``, the file locked, then
``python -m pytest`` is timed under plain python3 and under ``python-sb`` with
``OS_SANDBOX=subprocess``, ``landlock``, ``bwrap`` and ``unshare`` (the Python layer on),
alternated run by run, as medians of the wall clock (the target, issue 29: <= 1.10x under every
provider with the Python layer on) and, for ``subprocess`` and ``landlock``, of the CPU time
used (steadier on a shared machine; under ``bwrap`` and ``unshare`` the program is reaped
inside its namespace and its CPU time is not counted).

The suites take seconds each: ``--runs 5`` is plenty (``bench/run.py realworld --runs 5``).
A project that is not in the cache is reported as missing, not timed. ``bench/run.py table``
times attrs alone (issue 29's row: what a user feels is one suite, and attrs is the one the
issue measured).
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cases import PYTHON3, PYTHON_SB

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.realworld import harness  # noqa: E402
from tests.realworld.test_sdists import PROJECTS, PYTEST  # noqa: E402

PROVIDERS = ("subprocess", "landlock", "bwrap", "unshare")
TARGET = 1.10


def _environment(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall-clock seconds and CPU seconds (user + system of the processes waited for: on a
    loaded machine the wall clock mostly measures the other load, CPU time much less)."""

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if proc.returncode not in (0, 1):  # 1: a suite with failures still ran completely
        raise RuntimeError(
            f"{' '.join(argv)} ended with {proc.returncode}:\n"
            + proc.stderr.decode(errors="replace")[-2000:]
        )
    return elapsed, cpu


def _measure(name: str, args: list[str]) -> Callable[[Path, int], dict[str, Any]]:
    def measure(workdir: Path, runs: int) -> dict[str, Any]:
        label = f"{name}: pytest under each provider / python3"
        cache = harness.sdist_cache()
        try:
            source = _unpack(name, workdir / name)
        except FileNotFoundError:
            return {"name": label, "kind": "value", "value": f"missing from {cache}", "unit": ""}
        home = workdir / f"{name}-home"
        home.mkdir()
        env = _environment(home)
        argv = [*PYTEST, *args]
        rules = source / ".py-sandboxes"
        subprocess.run(
            [PYTHON_SB, f"--learn={rules}", *argv], cwd=source, env=env, capture_output=True
        )
        with rules.open("a") as handle:
            handle.write("learn=false\n")
        sides: dict[str, list[tuple[float, float]]] = {"python3": []}
        sides.update({p: [] for p in PROVIDERS})
        for _ in range(runs):  # alternate, so drift hits every side alike
            sides["python3"].append(_timed([PYTHON3, *argv], source, env))
            for provider in PROVIDERS:
                sandboxed = {**env, "OS_SANDBOX": provider}
                sides[provider].append(_timed([PYTHON_SB, *argv], source, sandboxed))

        def median(side: str, which: int) -> float:
            return statistics.median(sample[which] for sample in sides[side])

        base, base_cpu = median("python3", 0), median("python3", 1)
        ratios = {p: round(median(p, 0) / base, 3) for p in PROVIDERS}
        # Under bwrap and unshare the program is reaped inside the namespace, not waited for by
        # a process of ours: its CPU time is not counted, so no CPU ratio is shown for them.
        cpu_ratios = {p: round(median(p, 1) / base_cpu, 3) for p in ("subprocess", "landlock")}
        verdict = "ok" if max(ratios.values()) <= TARGET else "MISSED"
        text = "  ".join(
            f"{p} x{r}" + (f" (cpu x{cpu_ratios[p]})" if p in cpu_ratios else "")
            for p, r in ratios.items()
        )
        return {
            "name": label,
            "kind": "value",
            "value": f"python3 {base:.2f} s  {text}  target <= x{TARGET}: {verdict}",
            "unit": "",
            "baseline_median_s": round(base, 3),
            "baseline_cpu_median_s": round(base_cpu, 3),
            "ratios": ratios,
            "cpu_ratios": cpu_ratios,
            "runs": runs,
            "issue29": {"realworld": (text, f"<= x{TARGET} every provider", verdict == "ok")}
            if name == "attrs"
            else {},
        }

    return measure


def _unpack(name: str, destination: Path) -> Path:
    version = harness.pinned()[name]
    wanted = f"{name}-{version}.tar.gz".replace("_", "-").lower()
    cache = harness.sdist_cache()
    for path in cache.glob("*.tar.gz"):
        if path.name.replace("_", "-").lower() == wanted:
            destination.mkdir(parents=True)
            shutil.unpack_archive(path, destination, filter="data")
            (root,) = list(destination.iterdir())
            return root
    raise FileNotFoundError(wanted)


CASES: list[Any] = [_measure(project.name, project.args) for project in PROJECTS]
TABLE_CASES: list[Any] = [_measure(p.name, p.args) for p in PROJECTS if p.name == "attrs"]
