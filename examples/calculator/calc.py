#!/usr/bin/env -S python-sb
"""A sympy calculator: evaluates one expression under the ``calc`` eval-* profile.

    python-sb examples/calculator/calc.py "integrate(sin(x)**2, x)"
    echo "diff(exp(x*y), x)" | python-sb examples/calculator/calc.py

The expression is model output or user input: it is checked against ``eval-*:calc`` in
``.py-sandboxes`` next to this file (arithmetic, comparisons, subscripts; the sympy names
below; no imports, no attribute walks, no string evaluators), then run under its budgets
in guarded_eval's worker: a process forked once from this sandboxed one, so that one sympy
call that would run for minutes (``series(exp(sin(x)), x, 0, 60)``) is killed at
``eval-timeout:calc`` and its memory is bounded by the kernel; the result (a sympy
expression) crosses back because the profile may import sympy. A refused expression prints
the refusal and exits with status 1.
"""

from __future__ import annotations

import sys

import sympy

import pysandboxes

#: What an expression may use: symbols and the sympy functions a calculator needs.
FUNCTIONS = [
    "sqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "exp",
    "log",
    "gcd",
    "lcm",
    "Rational",
    "pi",
    "E",
    "I",
    "oo",
    "integrate",
    "diff",
    "limit",
    "series",
    "simplify",
    "expand",
    "factor",
    "solve",
    "Eq",
    "Abs",
    "floor",
    "ceiling",
    "Sum",
    "Matrix",
]


def names() -> dict[str, object]:
    found: dict[str, object] = {name: getattr(sympy, name) for name in FUNCTIONS}
    found.update(zip(("x", "y", "z", "n"), sympy.symbols("x y z n"), strict=True))
    return found


def calculate(expression: str) -> str:
    result = pysandboxes.guarded_eval(expression, names=names(), profile="calc")
    return sympy.sstr(result)


def main(argv: list[str]) -> int:
    expression = " ".join(argv[1:]) if len(argv) > 1 else sys.stdin.read()
    try:
        print(calculate(expression))
    except pysandboxes.SandBoxError as exc:
        print(f"refused: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except (SyntaxError, TypeError, ValueError, ZeroDivisionError) as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
