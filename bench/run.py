"""The one benchmark runner: every ``bench/bench_*.py`` module, as ratios to plain python3.

Each module defines ``CASES``: a list of :class:`CommandCase` (whole commands timed end to end,
for start-up) and/or :class:`SnippetCase` (a timed loop run once under plain python3 and once
under python-sb, for the cost of a guarded operation), and may define ``setup(workdir)`` to write
the files its cases need. A command case is run alternately with its baseline, ``--runs`` times,
and reported as medians, their ratio and difference; a snippet case reports the median time per
operation of each side and the ratio. These machines are noisy: read ratios, not absolute times.

Usage::

    .venv/bin/python bench/run.py                 # everything
    .venv/bin/python bench/run.py startup guard   # modules whose name contains a word
    .venv/bin/python bench/run.py --runs 40 --json results.json
    .venv/bin/python bench/run.py qemu            # os-sandbox=qemu (opt-in: seconds per run)
    .venv/bin/python bench/run.py table --runs 5  # issue 29's table, every row, with its goal

A module that sets ``OPT_IN = True`` (``bench_startup_qemu``: each run boots a VM) runs only
when a word names it. The word ``table`` runs the modules of issue 29's table (their
``TABLE_CASES`` where they define them, else every case) and ends with the table: each row's
figures, the goal, whether it is met, and the machine's load average when it was measured.
Every result carries that load (``load``: ``/proc/loadavg``'s one-minute figure).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from cases import PYTHON3, PYTHON_SB, CommandCase, SnippetCase  # noqa: E402

#: Issue 29's table: row key, what is measured, the module that measures it. A result names its
#: row in ``result["issue29"] = {key: (figure, goal, met)}``.
TABLE = (
    ("realworld", "a real project's test suite (attrs), every provider", "bench_realworld"),
    ("cpython", "CPython's own test modules (subprocess)", "bench_cpython"),
    ("startup", "start-up, hello.py, Python layer on", "bench_startup"),
    ("partial", "partial mode, trivial call (landlock)", "bench_partial"),
    ("eval", "guarded eval, 1,000-iteration loop (worker)", "bench_eval"),
    ("qemu", "qemu, start to output of hello.py", "bench_startup_qemu"),
    ("reference", "the reference implementation's start-up", "bench_startup"),
)


def _snippet_program(case: SnippetCase, repeats: int) -> str:
    body = "\n".join("        " + line for line in case.body.strip().splitlines())
    return f"""
import time
{case.init.strip()}
def _bench():
    for _ in range({case.loops}):
{body}
best = []
for _ in range({repeats}):
    t0 = time.perf_counter_ns()
    _bench()
    best.append((time.perf_counter_ns() - t0) / {case.loops})
best.sort()
print(best[len(best) // 2])
"""


def _time_once(argv: list[str], cwd: Path, env: dict[str, str] | None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise RuntimeError(
            f"benchmark command failed ({proc.returncode}): {' '.join(argv)}\n"
            + proc.stderr.decode(errors="replace")[-2000:]
        )
    return elapsed


def run_command_case(case: CommandCase, workdir: Path, runs: int) -> dict[str, Any]:
    env = None if case.env is None else {**os.environ, **case.env}
    cmd, base = case.command(workdir), case.baseline(workdir)
    _time_once(cmd, workdir, env)  # warm caches for both sides
    _time_once(base, workdir, env)
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(runs):  # alternate, so drift hits both sides alike
        theirs.append(_time_once(base, workdir, env))
        ours.append(_time_once(cmd, workdir, env))
    m_ours, m_base = statistics.median(ours), statistics.median(theirs)
    return {
        "name": case.name,
        "kind": "command",
        "median_ms": round(m_ours, 2),
        "baseline_median_ms": round(m_base, 2),
        "ratio": round(m_ours / m_base, 2),
        "over_ms": round(m_ours - m_base, 2),
        "target_ms_over": case.target_ms_over,
        "runs": runs,
    }


def run_snippet_case(case: SnippetCase, workdir: Path, runs: int) -> dict[str, Any]:
    program = workdir / f"snippet_{abs(hash(case.name))}.py"
    program.write_text(_snippet_program(case, max(5, runs // 2)))
    plain: list[float] = []
    guarded: list[float] = []
    for _ in range(3):
        out = subprocess.run(
            [PYTHON3, str(program)], cwd=workdir, capture_output=True, text=True, check=False
        )
        if out.returncode != 0:
            raise RuntimeError(f"{case.name} (python3) failed:\n{out.stderr[-2000:]}")
        plain.append(float(out.stdout.split()[-1]))
        out = subprocess.run(
            [PYTHON_SB, *case.sb_args(workdir), str(program)],
            cwd=workdir,
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            raise RuntimeError(f"{case.name} (python-sb) failed:\n{out.stderr[-2000:]}")
        guarded.append(float(out.stdout.split()[-1]))
    m_plain, m_guarded = statistics.median(plain), statistics.median(guarded)
    return {
        "name": case.name,
        "kind": "snippet",
        "ns_per_op": round(m_guarded, 1),
        "baseline_ns_per_op": round(m_plain, 1),
        "ratio": round(m_guarded / m_plain, 2),
        "target_ratio": case.target_ratio,
    }


def discover(words: Sequence[str]) -> list[ModuleType]:
    modules = []
    table = {stem for _, _, stem in TABLE} if "table" in words else set()
    for path in sorted(BENCH_DIR.glob("bench_*.py")):
        if path.stem in table:
            pass
        elif words and not any(word in path.stem for word in words):
            continue
        elif "qemu" in path.stem and not any("qemu" in word for word in words):
            continue  # OPT_IN: named only (checked before the import, which costs nothing)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules.append(module)
    return modules


def _format(result: dict[str, Any]) -> str:
    if result["kind"] == "command":
        target = result["target_ms_over"]
        verdict = ""
        if target is not None:
            verdict = (
                f"  target <= +{target:g} ms: {'ok' if result['over_ms'] <= target else 'MISSED'}"
            )
        return (
            f"{result['name']:<48} {result['median_ms']:8.1f} ms vs "
            f"{result['baseline_median_ms']:6.1f} ms  x{result['ratio']:<5} "
            f"+{result['over_ms']:.1f} ms{verdict}"
        )
    if result["kind"] == "snippet":
        target = result["target_ratio"]
        verdict = ""
        if target is not None:
            verdict = f"  target <= x{target:g}: {'ok' if result['ratio'] <= target else 'MISSED'}"
        return (
            f"{result['name']:<48} {result['ns_per_op']:10.0f} ns/op vs "
            f"{result['baseline_ns_per_op']:8.0f} ns/op  x{result['ratio']}{verdict}"
        )
    return f"{result['name']:<48} {result['value']} {result.get('unit', '')}"


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def print_table(results: Sequence[dict[str, Any]]) -> None:
    """Issue 29's table from ``results``: every row, its figures (with the load when each was
    measured), the goal, and whether it is met; a row no module of this run measured says how
    to measure it."""

    print("\n== issue 29's table (ratios and differences to plain python3 in the same run)")
    for key, measure, stem in TABLE:
        found = [
            (row, result.get("load"))
            for result in results
            for name, row in (result.get("issue29") or {}).items()
            if name == key
        ]
        if not found:
            print(f"- {measure}: not measured in this run (bench/run.py {stem[6:]})")
            continue
        goal = found[0][0][1]
        met = all(row[2] for row, _ in found)
        figures = "; ".join(f"{row[0]} [load {load}]" for row, load in found)
        print(f"- {measure}: {figures}  goal {goal}: {'ok' if met else 'MISSED'}")


def _realistic_environment() -> None:
    """Measure as an installed package runs: with byte-code caches.

    Some machines set PYTHONDONTWRITEBYTECODE=1, which makes every import of python-sb's own
    modules (and of the stdlib modules that are not frozen) compile from source, on both sides
    but twice on python-sb's (parent and child). pip compiles caches at install time, so the
    benchmark drops the variable and warms the caches once.
    """

    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    import compileall

    src = BENCH_DIR.parent / "src"
    if src.is_dir():
        compileall.compile_dir(str(src), quiet=1)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "words", nargs="*", help="run only modules whose name contains one of these"
    )
    parser.add_argument("--runs", type=int, default=21, help="alternated runs per command case")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    _realistic_environment()
    results: list[dict[str, Any]] = []
    print(f"python3: {PYTHON3}   python-sb: {PYTHON_SB}   runs: {args.runs}")
    with tempfile.TemporaryDirectory(prefix="pysb-bench-") as tmp:
        workdir = Path(tmp)
        (workdir / "hello.py").write_text("print('hello')\n")
        for module in discover(args.words):
            print(f"== {module.__name__}")
            module_dir = workdir / module.__name__
            module_dir.mkdir()
            (module_dir / "hello.py").write_text("print('hello')\n")
            if hasattr(module, "setup"):
                module.setup(module_dir)
            cases = module.CASES
            if "table" in args.words and hasattr(module, "TABLE_CASES"):
                cases = module.TABLE_CASES
            for case in cases:
                if isinstance(case, CommandCase):
                    result = run_command_case(case, module_dir, args.runs)
                elif isinstance(case, SnippetCase):
                    result = run_snippet_case(case, module_dir, args.runs)
                else:  # a module-specific measurement: a callable returning a result dict
                    result = case(module_dir, args.runs)
                result.setdefault("load", _load())
                results.append(result)
                print(_format(result), flush=True)
    if "table" in args.words:
        print_table(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
