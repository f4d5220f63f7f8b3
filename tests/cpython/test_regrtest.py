"""CPython's regression tests give the same per-test results under python-sb (issue 27).

Each case runs one module of CPython's ``test`` package with plain python and under
``python-sb`` with a rule file that grants everything (``harness.permissive_rules``), for one
CPython and one provider, and fails on a test whose outcome differs -- unless
``known_differences.txt`` lists it with the rule that requires it.

Two lists, to keep CI within its budget:

- :data:`DEFAULT` (every run, about 100 s on the 2-core test machine with ``-n 2``):
  a chosen set of quick modules -- each supported CPython under ``os-sandbox=subprocess``,
  and at least one module under each kernel provider with the Python layer on;
- :data:`FULL` with ``PYSANDBOXES_CPYTHON_TESTS=all``: the modules issue 27 names, for each
  supported CPython under ``subprocess`` and for 3.11 under ``landlock``, ``bwrap`` and
  ``unshare`` (a long run: about an hour on that machine).

``PYSANDBOXES_CPYTHON_TESTS=test_json,test_shutil`` runs just those modules, in every
combination of the full list.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.cpython import harness
from tests.helpers import REPO, require, require_tool

#: The interpreters: .venv's (3.11) and the .venv-X.Y environments scripts/setup.sh makes.
PYTHONS = {
    "3.11": sys.executable,
    "3.12": str(REPO / ".venv-3.12" / "bin" / "python"),
    "3.13": str(REPO / ".venv-3.13" / "bin" / "python"),
}
KERNEL_PROVIDERS = ("landlock", "bwrap", "unshare")

#: The modules issue 27 names (run under FULL).
NAMED = (
    "test_runpy",
    "test_doctest",
    "test_importlib",
    "test_pickle",
    "test_shutil",
    "test_threading",
    "test_signal",
    "test_socket",
    "test_sqlite3",
    "test_tarfile",
    "test_json",
    "test_pathlib",
    "test_decimal",
    "test_subprocess",
)

#: Every normal run: quick modules that still cover the causes of issue 27 (files, signals,
#: sockets, SQLite, the import system), each CPython, each provider.
DEFAULT: tuple[tuple[str, str, str], ...] = (
    ("3.11", "subprocess", "test_runpy"),
    ("3.11", "subprocess", "test_shutil"),
    ("3.11", "subprocess", "test_sqlite3"),
    ("3.12", "subprocess", "test_json"),
    ("3.13", "subprocess", "test_runpy"),
    ("3.11", "landlock", "test_json"),
    ("3.11", "bwrap", "test_json"),
    ("3.11", "unshare", "test_json"),
)


def _full(modules: tuple[str, ...]) -> tuple[tuple[str, str, str], ...]:
    cases = [(v, "subprocess", m) for v in PYTHONS for m in modules]
    cases += [("3.11", p, m) for p in KERNEL_PROVIDERS for m in modules]
    return tuple(cases)


def _cases() -> tuple[tuple[str, str, str], ...]:
    chosen = os.environ.get("PYSANDBOXES_CPYTHON_TESTS", "")
    if chosen == "all":
        return _full(NAMED)
    if chosen:
        return _full(tuple(m.strip() for m in chosen.split(",") if m.strip()))
    return DEFAULT


def _require_provider(provider: str) -> None:
    from pysandboxes.providers import get_provider

    if provider == "bwrap":
        require_tool("bwrap", "bubblewrap")
    if provider == "unshare":
        require_tool("unshare", "util-linux")
    state = get_provider(provider).availability()
    require(state.ok, f"os-sandbox={provider} cannot run here: {state.reason}")


@pytest.mark.slow
@pytest.mark.timeout(4 * harness.MODULE_TIMEOUT)
@pytest.mark.parametrize(("version", "provider", "module"), _cases())
def test_same_results_as_plain_python(
    version: str, provider: str, module: str, tmp_path: Path
) -> None:
    python = PYTHONS[version]
    require(Path(python).exists(), f"no environment for CPython {version} ({python})")
    require(
        harness.has_test_package(python),
        f"CPython {version} has no test package (Debian: libpython{version}-testsuite)",
    )
    if provider != "subprocess":
        _require_provider(provider)
    result = harness.confirm(python, module, tmp_path, provider, harness.load_known())
    assert result.plain.outcomes, f"plain python gave no results:\n{result.plain.tail}"
    assert result.sandboxed.outcomes, f"python-sb gave no results:\n{result.sandboxed.tail}"
    report = "\n".join(d.describe() for d in result.unexplained)
    assert not result.unexplained, (
        f"{module} under python-sb (os-sandbox={provider}, CPython {version}) differs from "
        f"plain python; fix it, or list a difference the rules require in "
        f"tests/cpython/known_differences.txt:\n{report}"
    )
