#!/usr/bin/env bash
# Set everything up (system packages when root, .venv, dev tools), then lint, type-check and run
# the whole test suite. Extra arguments go to pytest.
# PYSANDBOXES_REQUIRE_ALL=1 turns every "tool or kernel feature missing" skip into a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy
.venv/bin/python -m pytest -n 2 "$@"
