#!/bin/sh
# A separate virtualenv for the CrewAI sample: crewai pins openai 2.x and an older pydantic,
# which the OpenAI Agents SDK (openai 3.x) of the [agents] extra cannot share. Usage:
#   examples/agents/crewai/make-venv.sh [DIR]     (default .venv/crewai, where the tests look;
#                                                 scripts/setup.sh runs it)
# or point the tests elsewhere with PYSANDBOXES_CREWAI_PYTHON=DIR/bin/python.
set -eu
repo=$(cd "$(dirname "$0")/../../.." && pwd)
dir=${1:-$repo/.venv/crewai}
"${PYTHON:-python3}" -m venv "$dir"
"$dir/bin/python" -m pip install -q --disable-pip-version-check "crewai>=1.10,<2"
"$dir/bin/python" -m pip install -q --disable-pip-version-check --no-deps -e "$repo"
echo "PYSANDBOXES_CREWAI_PYTHON=$dir/bin/python"
