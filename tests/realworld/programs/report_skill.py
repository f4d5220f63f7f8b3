"""The seed's skill: a CSV of sales summed by region, printed as a table with tabulate."""

import csv
import sys
from collections import defaultdict

from tabulate import tabulate

totals: dict[str, float] = defaultdict(float)
with open(sys.argv[1], newline="") as handle:
    for row in csv.DictReader(handle):
        totals[row["region"]] += float(row["amount"])
print(tabulate(sorted(totals.items()), headers=["region", "total"], floatfmt=".2f"))
