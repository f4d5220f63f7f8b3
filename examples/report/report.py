#!/usr/bin/env -S python-sb
# Launched by the shebang through python-sb, never by a bare `python`.
# Rules: ./.py-sandboxes, next to this script, the permission manifest of this example.
"""Summarise a CSV of sales by region: the bundled example of python-sb.

It needs exactly what its rule file grants: read its own directory, the modules csv and sys
(plus what they import), and the REPORT_TITLE environment variable. Anything else (a file in
your home, the network, a subprocess) is refused with a message naming the rule.
"""

import csv
import os
import sys
from collections import defaultdict


def main(path: str) -> int:
    totals: dict[str, float] = defaultdict(float)
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            totals[row["region"]] += float(row["amount"])
    title = os.environ.get("REPORT_TITLE", "Sales by region")
    print(title)
    print("-" * len(title))
    for region, amount in sorted(totals.items(), key=lambda item: -item[1]):
        print(f"{region:<10} {amount:>10.2f}")
    print(f"{'total':<10} {sum(totals.values()):>10.2f}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} SALES.csv", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(main(sys.argv[1]))
