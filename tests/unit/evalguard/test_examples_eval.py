"""examples/calculator: the sympy calculator and the CSV snippet runner, under python-sb."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import REPO, base_env, require, run_sb

EXAMPLE = REPO / "examples" / "calculator"


def _calc(expression: str, home: Path) -> tuple[int, str, str]:
    require(importlib.util.find_spec("sympy"), "sympy is not installed (pip install -e .[dev])")
    done = run_sb(["calc.py", expression], cwd=EXAMPLE, env=base_env(home), timeout=120)
    return done.returncode, done.stdout.strip(), done.stderr


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("integrate(sin(x)**2, x)", "x/2 - sin(x)*cos(x)/2"),
        ("diff(exp(x*y), x)", "y*exp(x*y)"),
        ("Rational(1, 3) + Rational(1, 6)", "1/2"),
        ("solve(x**2 - 4, x)", "[-2, 2]"),
        ("sqrt(8) > 2", "True"),
    ],
)
def test_calculator_computes(expression: str, expected: str, home: Path) -> None:
    code, out, err = _calc(expression, home)
    assert code == 0, err
    assert out == expected


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        ("x.__class__.__mro__", "EvalSyntaxRejected"),
        ("pi.evalf(10**7)", "EvalSyntaxRejected"),
        ("x.subs('x', 1)", "EvalSyntaxRejected"),
        ("Rational(1, 2) ** 10**9", "EvalMemoryError"),
        ("x ** (2 ** 10**6)", "EvalMemoryError"),
    ],
)
def test_calculator_refuses(expression: str, error: str, home: Path) -> None:
    code, _out, err = _calc(expression, home)
    assert code == 1
    assert f"refused: {error}" in err


LONG_SERIES = "series(exp(sin(x)), x, 0, 60)"


def test_control_long_sympy_computation_runs_on() -> None:
    require(importlib.util.find_spec("sympy"), "sympy is not installed (pip install -e .[dev])")
    code = f"from sympy import *\nx = Symbol('x')\n{LONG_SERIES}"
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([sys.executable, "-c", code], timeout=8, capture_output=True)


def test_calculator_kills_a_long_sympy_computation(home: Path) -> None:
    """One sympy call that runs for minutes: the calculator's evaluation runs in the
    guarded_eval worker forked from it, killed at eval-timeout:calc (2s)."""

    start = time.monotonic()
    code, _out, err = _calc(LONG_SERIES, home)
    assert code == 1
    assert "refused: EvalTimeout" in err and "killed" in err
    assert time.monotonic() - start < 30


SNIPPET = """\
import statistics
def revenue(row):
    return row['units'] * row['price']
by_region = {}
for row in rows:
    by_region[row['region']] = by_region.get(row['region'], 0) + revenue(row)
best = max(by_region, key=lambda r: by_region[r])
mean_units = statistics.mean(r['units'] for r in rows)
print(f"{best}: {by_region[best]:.2f}")
rows.clear()
"""


def test_snippet_runner(home: Path) -> None:
    done = run_sb(
        ["snippets.py", "sales.csv"], cwd=EXAMPLE, env=base_env(home), input=SNIPPET, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "east: 90.00"
    assert "best = 'east'" in lines and "mean_units = 10.2" in lines
    assert lines[-1] == "# 5 rows in sales.csv"  # rows.clear() cleared a copy


def test_snippet_runner_refuses(home: Path) -> None:
    done = run_sb(
        ["snippets.py", "sales.csv"],
        cwd=EXAMPLE,
        env=base_env(home),
        input="import os\nwhile True:\n    pass\n",
        timeout=60,
    )
    assert done.returncode == 1
    assert "refused: EvalSyntaxRejected" in done.stderr
    assert "eval-import:snippet=os" not in done.stderr  # os can never be granted
    done = run_sb(
        ["snippets.py", "sales.csv"],
        cwd=EXAMPLE,
        env=base_env(home),
        input="while True:\n    pass\n",
        timeout=60,
    )
    assert done.returncode == 1 and "refused: EvalTimeout" in done.stderr
