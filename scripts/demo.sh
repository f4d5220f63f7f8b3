#!/usr/bin/env bash
# The main job: set everything up, then run the bundled example with python-sb on the default
# provider of its rule file (examples/report/.py-sandboxes: Landlock where the kernel has it).
# The example's rules expose ./examples/report, so it runs from the repository root.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-dev
exec .venv/bin/python-sb examples/report/report.py examples/report/sales.csv
