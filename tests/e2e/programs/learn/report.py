"""CSV in, report out: the seed's report script, for the learning tests.

Usage: report.py SALES.csv REPORT.txt [--extra]. Reads REPORT_TITLE; writes the report file.
With --extra it also imports statistics and reads a footer from ~/.config/report/footer.txt
(what a new version of the script might start doing: the audit and relearning tests use it).
"""

import csv
import os
import sys
from collections import defaultdict


def main(source: str, target: str, extra: bool) -> int:
    totals: dict[str, float] = defaultdict(float)
    with open(source, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            totals[row["region"]] += float(row["amount"])
    title = os.environ.get("REPORT_TITLE", "Sales by region")
    lines = [title, "-" * len(title)]
    for region, amount in sorted(totals.items(), key=lambda item: -item[1]):
        lines.append(f"{region:<10} {amount:>10.2f}")
    lines.append(f"{'total':<10} {sum(totals.values()):>10.2f}")
    if extra:
        import statistics

        lines.append(f"{'mean':<10} {statistics.mean(totals.values()):>10.2f}")
        footer = os.path.expanduser("~/.config/report/footer.txt")
        with open(footer, encoding="utf-8") as handle:
            lines.append(handle.read().strip())
    with open(target, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    print(f"report written: {len(totals)} regions")
    return 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--extra"]
    if len(args) != 2:
        print(f"usage: {sys.argv[0]} SALES.csv REPORT.txt [--extra]", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(main(args[0], args[1], "--extra" in sys.argv))
