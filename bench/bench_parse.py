"""Parse time of a 500-line rule file with includes (issue 2).

Two measurements of the same file set (a main file of 400 lines including two files of 50):

- ``parse`` — ``load_policy`` in this process, warm (modules imported, first parse done),
  median over the runs, in µs per line; the baseline is reading and splitting the same three
  files into lines, so the ratio is the cost of the rule language itself.
- ``cold load`` — a fresh ``python3`` that imports ``pysandboxes.policy`` and loads the file
  set once (what ``python-sb`` pays at start-up for its rules), in ms, against a fresh
  ``python3`` that only starts.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from cases import PYTHON3  # noqa: E402

LINES = 500


def _rules(workdir: Path, count: int, prefix: str) -> list[str]:
    data = workdir / "data"
    lines: list[str] = []
    kinds = [
        lambda i: f"# section {i}: a comment line explaining the rules below",
        lambda i: f"net=ALLOW|TCP|host{i}.{prefix}.example.com|443,8000-8100|OUT",
        lambda i: f"net=DENY|*|10.{i % 256}.0.0/16|*|OUT  # keep off the intranet",
        lambda i: f"python-import=mod{i}_{prefix}, json, csv",
        lambda i: f"env=VAR_{prefix}_{i}=${{VAR_{prefix}_{i}:-default{i}}}",
        lambda i: f"expose-ro=${{DATA:-{data}}}/d{i % 10}",
        lambda i: f"python-api=ALLOW:mod{i}.func,threads",
        lambda i: f"ignore=*.secret{i}",
        lambda i: f'unenv="SECRET_{prefix}_{i}"',
        lambda i: "",
    ]
    for i in range(count):
        lines.append(kinds[i % len(kinds)](i))
    return lines


def setup(workdir: Path) -> None:
    for i in range(10):
        (workdir / "data" / f"d{i}").mkdir(parents=True, exist_ok=True)
    (workdir / "inc-a").write_text("\n".join(_rules(workdir, 50, "a")) + "\n")
    (workdir / "inc-b").write_text("\n".join(_rules(workdir, 50, "b")) + "\n")
    main = _rules(workdir, LINES - 100 - 2, "main")
    main.insert(10, 'include "inc-a"')
    main.insert(200, 'include "inc-b"')
    (workdir / "rules").write_text("\n".join(main) + "\n")


def _files(workdir: Path) -> list[Path]:
    return [workdir / "rules", workdir / "inc-a", workdir / "inc-b"]


def parse_per_line(workdir: Path, runs: int) -> dict[str, Any]:
    from pysandboxes.policy import load_policy

    files = _files(workdir)
    total_lines = sum(len(p.read_text().splitlines()) for p in files)
    environ = {"HOME": str(workdir)}

    def parse() -> None:
        load_policy(str(workdir / "rules"), environ=environ, cwd=str(workdir))

    def read_split() -> None:
        for path in files:
            with open(path, "rb") as handle:
                handle.read().decode("utf-8").splitlines()

    parse()  # warm: imports, compiled tables
    ours: list[float] = []
    base: list[float] = []
    for _ in range(max(runs, 5)):
        start = time.perf_counter()
        parse()
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        read_split()
        base.append(time.perf_counter() - start)
    per_line = statistics.median(ours) / total_lines * 1e6
    base_line = statistics.median(base) / total_lines * 1e6
    return {
        "name": f"parse {total_lines}-line rule file, 2 includes",
        "kind": "value",
        "value": round(per_line, 2),
        "unit": f"µs/line (read+split: {base_line:.2f} µs/line, x{per_line / base_line:.0f})",
        "baseline_value": round(base_line, 3),
        "lines": total_lines,
    }


def cold_load(workdir: Path, runs: int) -> dict[str, Any]:
    program = (
        "from pysandboxes.policy import load_policy\n"
        f"load_policy({str(workdir / 'rules')!r}, cwd={str(workdir)!r})\n"
    )
    ours: list[float] = []
    base: list[float] = []
    for _ in range(max(runs, 5)):
        start = time.perf_counter()
        subprocess.run([PYTHON3, "-c", "pass"], check=True)
        base.append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", program], check=True)
        ours.append(time.perf_counter() - start)
    m_ours, m_base = statistics.median(ours) * 1000, statistics.median(base) * 1000
    return {
        "name": "cold: import policy + load 500 lines",
        "kind": "value",
        "value": round(m_ours, 1),
        "unit": f"ms (python3 -c pass: {m_base:.1f} ms, +{m_ours - m_base:.1f} ms)",
        "baseline_value": round(m_base, 1),
    }


CASES = [parse_per_line, cold_load]
