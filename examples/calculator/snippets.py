#!/usr/bin/env -S python-sb
"""A data-analysis snippet runner: runs a snippet (model output) over the rows of a CSV file.

    python-sb examples/calculator/snippets.py examples/calculator/sales.csv < snippet.py

The snippet sees ``rows`` (a list of dicts; numbers converted) and may use the ``snippet``
profile of ``.py-sandboxes`` next to this file: statistics, comprehensions, f-strings, small
functions it defines, ``print``. Whatever it prints is shown; the data values it binds are
printed as ``name = value`` lines. The host's rows are copies: a snippet cannot change them.
"""

from __future__ import annotations

import csv
import sys

import pysandboxes


def load(path: str) -> list[dict[str, object]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return [
            {key: _number(value) for key, value in row.items()} for row in csv.DictReader(handle)
        ]


def _number(text: str) -> object:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def run(snippet: str, rows: list[dict[str, object]]) -> dict[str, object]:
    bound = pysandboxes.guarded_eval(snippet, names={"rows": rows}, profile="snippet", mode="exec")
    return {name: value for name, value in bound.items() if name != "rows"}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: snippets.py FILE.csv < snippet.py", file=sys.stderr)
        return 2
    rows = load(argv[1])
    try:
        bound = run(sys.stdin.read(), rows)
    except pysandboxes.SandBoxError as exc:
        print(f"refused: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    for name, value in sorted(bound.items()):
        print(f"{name} = {value!r}")
    print(f"# {len(rows)} rows in {argv[1]}")  # the host's rows: the snippet had a copy
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
