#!/usr/bin/env -S python-sb
# Launched by the shebang through python-sb, never by a bare `python`.
# Needs on the host: python-sb (from a clone of its repository: pip install /path/to/python-sb;
# the index's "pysandboxes" is another implementation until it is released); no third-party import.
# Rules: ./.py-sandboxes, next to this script, the permission manifest of this skill.
"""Total a CSV of sales by region (the example skill's script).

Usage: report.py [CSV]  (default: sample.csv next to this script)
"""

import csv
import os
import sys
from collections import defaultdict


def main(argv: list[str]) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    path = argv[1] if len(argv) > 1 else os.path.join(here, "sample.csv")
    totals: dict[str, float] = defaultdict(float)
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            totals[row["region"]] += float(row["amount"])
    print("Sales by region")
    for region, amount in sorted(totals.items(), key=lambda item: -item[1]):
        print(f"{region:<10} {amount:>10.2f}")
    print(f"{'total':<10} {sum(totals.values()):>10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
