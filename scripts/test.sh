#!/usr/bin/env bash
# Set everything up (system packages when root, .venv, dev tools), then lint, type-check and run
# the whole test suite. Extra arguments go to that pytest run.
# PYSANDBOXES_REQUIRE_ALL=1 turns every "tool or kernel feature missing" skip into a failure.
#
# Then the Python-layer suites run again under each other supported CPython, in its own
# environment .venv-X.Y (made by scripts/setup.sh). The versions: PYSANDBOXES_PYTHONS, default
# "3.12 3.13" -- the supported CPythons (pyproject.toml, README.md) other than .venv's 3.11
# (about two minutes each on the 2-core test machine).
#
# "Python layer" here: everything whose behaviour depends on the interpreter's version -- the
# guard (audit events, wrappers, frames: tests/unit/guard), the launcher and its bootstrap
# (CPython's options, runpy semantics, tracebacks: tests/unit/launch, tests/e2e/test_launcher*),
# the policy parser they load (tests/unit/policy, tests/unit/test_errors.py), the red-team corpora
# of misuse and review (tests/redteam/misuse, tests/redteam/review), and the end-to-end tests of
# the guard and the environment (tests/e2e/test_guard*, tests/e2e/test_env.py), and guarded
# evaluation (tests/unit/evalguard, tests/redteam/eval: the interpreter's own C code changes
# between versions -- 3.12 imports _pylong for big-integer division, for one). The kernel
# providers, learning, partial mode and the conformance matrix run under .venv only.
#
# Each phase is timed ("test.sh: [NAME] N s, exit E"), and a failing test phase does not stop
# the others: every phase runs, a summary closes the output, and the exit status is that of the
# first failure (the set-up, lint and type checks still stop the run at once: without them the
# tests mean nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYSANDBOXES_PYTHONS=${PYSANDBOXES_PYTHONS-3.12 3.13}

SUMMARY=()
FIRST_FAILURE=0
LAST_STATUS=0
timed() {  # NAME COMMAND...: run COMMAND, print and record its wall time and exit status
  local name=$1 start=$SECONDS
  shift
  echo "test.sh: [$name] starts at $(date -u +%H:%M:%S)"
  LAST_STATUS=0
  "$@" || LAST_STATUS=$?
  SUMMARY+=("[$name] $((SECONDS - start)) s, exit $LAST_STATUS")
  echo "test.sh: ${SUMMARY[-1]}"
  if [ "$LAST_STATUS" != 0 ] && [ "$FIRST_FAILURE" = 0 ]; then FIRST_FAILURE=$LAST_STATUS; fi
  return 0
}
checked() {  # NAME COMMAND...: like timed, but a failure ends the run at once
  timed "$@"
  if [ "$LAST_STATUS" != 0 ]; then
    printf 'test.sh: %s\n' "${SUMMARY[@]}"
    exit "$LAST_STATUS"
  fi
}

checked setup scripts/setup.sh
checked ruff-check .venv/bin/ruff check src tests bench
checked ruff-format .venv/bin/ruff format --check src tests bench
checked mypy .venv/bin/mypy
# Issue 19: the whole package type-checks for macOS and for Windows too (platform-specific
# code is chosen by platform_caps, with sys.platform guards mypy understands).
checked mypy-darwin .venv/bin/mypy --platform darwin
checked mypy-win32 .venv/bin/mypy --platform win32
timed pytest .venv/bin/python -m pytest -n 2 "$@"
# Issue 19: the launcher, rule-language, Python-layer (misuse corpus) and learning suites again
# with the portable paths forced (no memfd, /proc, sigwaitinfo, pidfd or kernel provider; a
# switch for tests only, src/pysandboxes/platform_caps.py). Linux-only tests skip under it.
timed portable env PYSANDBOXES_PORTABLE=1 .venv/bin/python -m pytest -n 2 -q tests/unit/launch \
  tests/unit/policy tests/unit/learn tests/unit/guard/test_agreement.py \
  tests/e2e/test_launcher*.py tests/e2e/test_portable.py tests/e2e/test_explain.py \
  tests/e2e/test_guard.py tests/e2e/test_learn.py tests/e2e/test_learn_children.py \
  tests/e2e/test_audit.py tests/redteam/misuse
# Partial mode's worker started without fork (subprocess), as on Windows (about 10 s).
timed portable-spawn env PYSANDBOXES_PORTABLE=spawn .venv/bin/python -m pytest -q \
  tests/e2e/test_partial.py
# The audit hook without its compiled accelerator (src/pysandboxes/guard/accelerator.py): the
# pure-Python code of the same meaning, under the red-team corpora of the Python layer, the
# guard's unit tests and the conformance matrix's cells with the Python layer on, qemu's aside
# (the whole run above used the compiled one; the 3.12 and 3.13 runs below use it too).
timed accelerator-off env PYSANDBOXES_ACCELERATOR=off PYSANDBOXES_MATRIX_LAYER=python \
  .venv/bin/python -m pytest -n 2 -q -p no:cacheprovider tests/unit/guard \
  tests/redteam/misuse tests/redteam/review tests/redteam/eval tests/redteam/hostile \
  tests/conformance -k "not qemu and not test_control"

PYTHON_LAYER_TESTS=(
  tests/unit/guard
  tests/unit/launch
  tests/unit/policy
  tests/unit/test_errors.py
  tests/redteam/misuse
  tests/redteam/review
  tests/e2e/test_guard.py
  tests/e2e/test_guard_dns.py
  tests/e2e/test_guard_import_listing.py
  tests/e2e/test_launcher.py
  tests/e2e/test_launcher_bootstrap.py
  tests/e2e/test_launcher_imports.py
  tests/e2e/test_launcher_tmpdir.py
  tests/e2e/test_launcher_tracebacks.py
  tests/e2e/test_env.py
  tests/unit/evalguard
  tests/redteam/eval
)
for version in ${PYSANDBOXES_PYTHONS//,/ }; do
  venv=".venv-$version"
  if [ ! -x "$venv/bin/python" ]; then  # setup.sh said why (and stopped under REQUIRE_ALL)
    echo "test.sh: no $venv: the Python-layer suites do not run under CPython $version" >&2
    continue
  fi
  echo "test.sh: the Python-layer suites under $("$venv/bin/python" -V)"
  timed "python$version" "$venv/bin/python" -m pytest -n 2 -p no:cacheprovider -q \
    "${PYTHON_LAYER_TESTS[@]}"
done
printf 'test.sh: %s\n' "${SUMMARY[@]}"
exit "$FIRST_FAILURE"
