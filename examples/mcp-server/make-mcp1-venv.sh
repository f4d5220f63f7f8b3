#!/bin/sh
# A separate virtualenv with the mcp SDK's 1.x series and this checkout of python-sb, for the
# tests of the MCP integration against 1.x (the dev extra has 2.x). Usage:
#   examples/mcp-server/make-mcp1-venv.sh [DIR]     (default .venv/mcp1, where the tests look;
#                                                    scripts/setup.sh runs it)
# or point the tests elsewhere with PYSANDBOXES_MCP1_PYTHON=DIR/bin/python.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$repo/.venv/mcp1}
"${PYTHON:-python3}" -m venv "$dir"
"$dir/bin/python" -m pip install -q "mcp>=1.10,<2"
"$dir/bin/python" -m pip install -q --no-deps -e "$repo"
echo "PYSANDBOXES_MCP1_PYTHON=$dir/bin/python"
