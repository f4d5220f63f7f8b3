#!/usr/bin/env bash
# The main job: set everything up, then run the bundled example with python-sb on the default
# provider of its rule file (examples/report/.py-sandboxes).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-dev
cd /tmp
exec "$OLDPWD/.venv/bin/python-sb" "$OLDPWD/examples/report/report.py" "$OLDPWD/examples/report/sales.csv"
