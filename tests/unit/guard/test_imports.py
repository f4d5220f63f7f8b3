"""Imports through an armed interpreter: modules loaded before the program, libraries' own
imports, aliases such as ``os.path``, hand-loading, import fallbacks."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.unit.guard.harness import run_armed


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    (site / "libpkg.py").write_text(
        "from os.path import join\nimport io, builtins, json\n"
        "SAME_IO = io.open is builtins.open\nJOINED = join('a', 'b')\n"
    )
    return site


def test_libraries_import_what_the_program_may_not(tmp_path: Path) -> None:
    code = """
def attempt(name):
    try:
        __import__(name)
        print(name, "imported")
    except ModuleNotFoundError as exc:
        print(name, type(exc).__name__, exc.name)
for name in ("os", "os.path", "json", "io"):
    attempt(name)
import libpkg
print("library", libpkg.SAME_IO, libpkg.JOINED)
attempt("json")  # loaded by the library meanwhile: still judged (builtins.__import__ check)
try:
    import yaml_or_anything_else
except ImportError:
    print("fallback works")
"""
    site = _site(tmp_path)
    result = run_armed(
        code,
        "python-import=libpkg\n",
        tmp_path,
        env={**os.environ, "PYTHONPATH": str(site)},
        context_overrides={"prefixes": [str(site), sys.prefix, sys.base_prefix]},
    )
    assert result.lines == [
        "os RuleModuleNotFoundError os",
        "os.path RuleModuleNotFoundError os",
        "json RuleModuleNotFoundError json",
        "io RuleModuleNotFoundError io",
        "library True a/b",
        "json RuleModuleNotFoundError json",
        "fallback works",
    ], result.stdout + result.stderr


def test_allowed_preloaded_module_keeps_its_identity(tmp_path: Path) -> None:
    code = """
import io, os, sys
print(type(sys.stdout).__module__ == "io" or type(sys.stdout).__module__ == "_io")
print(io.open is open, os.environ is sys.modules["os"].environ)
"""
    result = run_armed(code, "python-import=io,os,sys\n", tmp_path)
    assert result.lines == ["True", "True True"], result.stdout + result.stderr


def test_builtin_modules_are_judged_for_the_program(tmp_path: Path) -> None:
    """C built-in modules (gc, posix, _imp, marshal, _thread) need a rule when the program
    imports them (SPEC §3.3: the standard library is not exempt), while the allowed modules
    that use them for themselves (os: posix, io: _io, json) keep working."""

    code = """
def attempt(name):
    try:
        __import__(name)
        print(name, "imported")
    except ModuleNotFoundError as exc:
        print(name, type(exc).__name__, exc.name)
for name in ("gc", "posix", "_imp", "marshal", "_thread", "_io"):
    attempt(name)
import os, io, json
print("libraries", os.getcwd() != "", io.StringIO("x").read(), json.dumps([1]))
try:
    import posix
except ModuleNotFoundError as exc:
    print("statement", type(exc).__name__, exc.name)
import gc
print("granted", gc.isenabled())
"""
    result = run_armed(code, "expose-ro=.\npython-import=os,io,json,gc\n", tmp_path)
    assert result.lines == [
        "gc imported",
        "posix RuleModuleNotFoundError posix",
        "_imp RuleModuleNotFoundError _imp",
        "marshal RuleModuleNotFoundError marshal",
        "_thread RuleModuleNotFoundError _thread",
        "_io RuleModuleNotFoundError _io",
        "libraries True x [1]",
        "statement RuleModuleNotFoundError posix",
        "granted True",
    ], result.stdout + result.stderr
    refused = run_armed("import gc\n", "expose-ro=.\n", tmp_path)
    assert refused.lines[0].startswith("REFUSED RuleModuleNotFoundError"), refused.stdout
    assert '"suggestion": "python-import=gc"' in refused.stdout, refused.stdout
