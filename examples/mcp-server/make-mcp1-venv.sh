#!/bin/sh
# A separate virtualenv with the mcp SDK's 1.x series and this checkout of python-sb, for the
# tests of the MCP integration against 1.x (the dev extra has 2.x). Usage:
#   examples/mcp-server/make-mcp1-venv.sh [DIR]     (default /tmp/pysandboxes-mcp1)
# then run the tests with PYSANDBOXES_MCP1_PYTHON=DIR/bin/python.
set -eu
dir=${1:-/tmp/pysandboxes-mcp1}
repo=$(cd "$(dirname "$0")/../.." && pwd)
python3 -m venv "$dir"
"$dir/bin/python" -m pip install -q "mcp>=1.10,<2"
"$dir/bin/python" -m pip install -q --no-deps -e "$repo"
echo "PYSANDBOXES_MCP1_PYTHON=$dir/bin/python"
