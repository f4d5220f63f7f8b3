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
# Issue 19: the package type-checks for macOS; for Windows the launcher, rule-language and
# provider paths do (the guard, learning and partial mode are not ported there yet).
.venv/bin/mypy --platform darwin
.venv/bin/mypy --platform win32 --follow-imports=silent src/pysandboxes/{platform_caps,runtime,errors}.py \
  src/pysandboxes/{launch,policy,providers,tools}
.venv/bin/python -m pytest -n 2 "$@"
# Issue 19: the launcher, rule-language, Python-layer (misuse corpus) and learning suites again
# with the portable paths forced (no memfd, /proc, sigwaitinfo, pidfd or kernel provider; a
# switch for tests only, src/pysandboxes/platform_caps.py). Linux-only tests skip under it.
PYSANDBOXES_PORTABLE=1 .venv/bin/python -m pytest -n 2 -q tests/unit/launch tests/unit/policy \
  tests/unit/learn tests/e2e/test_launcher*.py tests/e2e/test_portable.py tests/e2e/test_explain.py \
  tests/e2e/test_guard.py tests/e2e/test_learn.py tests/e2e/test_learn_children.py \
  tests/e2e/test_audit.py tests/redteam/misuse
