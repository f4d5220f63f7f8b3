#!/usr/bin/env bash
# The main job: set everything up, then run the bundled example with python-sb on the default
# provider of its rule file (examples/report/.py-sandboxes: Landlock where the kernel has it).
# The example's rules expose ./examples/report, so it runs from the repository root.
# The set-up also installs what the other examples import (the `examples` extra: sympy for
# examples/calculator, mcp for examples/mcp-server, pytest for examples/ci), so that each
# one runs as its page says, from .venv/bin/python-sb.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-dev
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[examples]'
exec .venv/bin/python-sb examples/report/report.py examples/report/sales.csv
