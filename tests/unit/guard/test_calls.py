"""Sensitive calls: specificity, one grant per chain, dynamic code from library versus program."""

from __future__ import annotations

from pathlib import Path

from tests.unit.guard.harness import run_armed

CHAIN = """
import os, subprocess
def show(label, action):
    try:
        action()
        print(label, "ran")
    except PermissionError as exc:
        print(label, "refused", exc.denial.target, exc.denial.detail)
show("run", lambda: subprocess.run(["true"]))
show("check_output", lambda: subprocess.check_output(["true"]))
show("popen", lambda: os.popen("true").read())
show("system", lambda: os.system("true"))
show("Popen", lambda: subprocess.Popen(["true"]).wait())
"""


def test_one_grant_covers_a_chain(tmp_path: Path) -> None:
    rules = "python-import=*\npython-api=ALLOW:subprocess.run\npython-api=ALLOW:os.popen\n"
    result = run_armed(CHAIN, rules, tmp_path)
    assert result.lines == [
        "run ran",
        "check_output refused subprocess.check_output process-exec",
        "popen ran",
        "system refused os.system process-exec",
        "Popen refused subprocess.Popen process-exec",
    ], result.stdout + result.stderr


def test_function_beats_category_and_deny_wins_ties(tmp_path: Path) -> None:
    rules = (
        "python-import=*\npython-api=ALLOW:process-exec\npython-api=DENY:os.system\n"
        "python-api=DENY:subprocess.Popen\npython-api=ALLOW:subprocess.Popen\n"
    )
    result = run_armed(CHAIN, rules, tmp_path)
    out = dict(line.split(" ", 1) for line in result.lines)
    assert out["system"].startswith("refused os.system")
    assert out["Popen"].startswith("refused subprocess.Popen")  # DENY wins at one level
    # The function the program called decides (no rule for it: the category allows); a rule
    # on a function it delegates to does not.
    assert out["run"] == "ran"
    assert out["popen"] == "ran"


def test_refusal_names_both_lines(tmp_path: Path) -> None:
    result = run_armed("import os\nos.system('true')\n", "python-import=os\n", tmp_path)
    refused = result.refused()
    assert refused is not None
    name, denials = refused
    assert name == "RuleApiPermissionError"
    assert denials[0]["suggestion"] == "python-api=ALLOW:os.system"
    assert denials[0]["detail"] == "process-exec"


def test_dynamic_code_of_libraries_is_not_judged(tmp_path: Path) -> None:
    code = """
import dataclasses, collections, json, pickle, typing
@dataclasses.dataclass(frozen=True)
class P:
    x: int
Pair = collections.namedtuple("Pair", "a b")
print("dataclass", P(1).x, Pair(1, 2).b)
print("pickle data", pickle.loads(pickle.dumps({"a": [1, 2]})))
for source in ("eval('1')", "exec('x = 1')", "compile('1', 's', 'eval')"):
    try:
        eval(source)
    except PermissionError as exc:
        print("refused", exc.denial.detail)
"""
    result = run_armed(code, "python-import=*\n", tmp_path)
    assert result.lines == [
        "dataclass 1 2",
        "pickle data {'a': [1, 2]}",
        "refused dynamic-code",
        "refused dynamic-code",
        "refused dynamic-code",
    ], result.stdout + result.stderr


def test_dynamic_code_granted(tmp_path: Path) -> None:
    result = run_armed("print(eval('6*7'))\n", "python-api=ALLOW:dynamic-code\n", tmp_path)
    assert result.lines == ["42"], result.stderr


def test_module_program_installed_with_the_libraries_is_the_program(tmp_path: Path) -> None:
    """``python-sb -m skillpkg`` where skillpkg sits in site-packages: its code is the
    program's (its eval is judged), while a library next to it stays a library."""

    import os
    import sys

    site = tmp_path / "site"
    (site / "skillpkg").mkdir(parents=True)
    (site / "skillpkg" / "__init__.py").write_text("def main():\n    return eval('6*7')\n")
    (site / "libpkg.py").write_text("def helper():\n    return eval('6*7')\n")
    code = """
import libpkg, skillpkg
print("library", libpkg.helper())
try:
    skillpkg.main()
    print("program ran")
except PermissionError as exc:
    print("program refused", exc.denial.detail)
"""
    result = run_armed(
        code,
        "python-import=libpkg\n",
        tmp_path,
        env={**os.environ, "PYTHONPATH": str(site)},
        context_overrides={
            "program_kind": "module",
            "program": "skillpkg",
            "prefixes": [str(site), sys.prefix, sys.base_prefix],
        },
    )
    assert result.lines == ["library 42", "program refused dynamic-code"], (
        result.stdout + result.stderr
    )


MARSHAL = """
import io, marshal
def show(label, action):
    try:
        action()
        print(label, "ran")
    except PermissionError as exc:
        print(label, "refused", exc.denial.target)
data = marshal.dumps(1)
show("loads", lambda: marshal.loads(data))
show("load", lambda: marshal.load(io.BytesIO(data)))
"""


def test_a_grant_of_marshal_loads_covers_its_c_alias(tmp_path: Path) -> None:
    """``marshal.load`` is an alias of ``marshal.loads`` implemented in C: the function rule
    of the one covers the other whether the walk of the stack runs or is settled at arm time
    (``NATIVE_NAMES``); a DENY of the alias still refuses both (``decided``'s loop)."""

    granted = run_armed(MARSHAL, "python-import=*\npython-api=ALLOW:marshal.loads\n", tmp_path)
    assert granted.lines == ["loads ran", "load ran"], granted.stdout + granted.stderr
    alias = run_armed(MARSHAL, "python-import=*\npython-api=ALLOW:marshal.load\n", tmp_path)
    assert alias.lines == ["loads ran", "load ran"], alias.stdout + alias.stderr
    denied = run_armed(
        MARSHAL,
        "python-import=*\npython-api=ALLOW:deserialization\npython-api=DENY:marshal.load\n",
        tmp_path,
    )
    assert denied.lines == ["loads refused marshal.loads", "load refused marshal.loads"], (
        denied.stdout + denied.stderr
    )
    none = run_armed(MARSHAL, "python-import=*\n", tmp_path)
    assert none.lines == ["loads refused marshal.loads", "load refused marshal.loads"]


def _qualnames(source: str) -> set[str]:
    """Every ``def`` and ``class`` of a module's source by qualified name."""

    import ast

    found: set[str] = set()

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + child.name
                found.add(name)
                inner = name + (".<locals>." if not isinstance(child, ast.ClassDef) else ".")
                visit(child, inner)
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def test_native_names_are_c_functions_of_this_cpython() -> None:
    """The premise of ``NATIVE_NAMES``: each is a registry name, and where this CPython has it,
    a builtin function or a C method, with no Python definition of the same qualified name
    in its module's source (``library_names`` names a frame by module and ``co_qualname``)."""

    import importlib
    import types

    from pysandboxes.guard.calls import NATIVE_NAMES, REGISTRY

    registry = {name for entry in REGISTRY for name in (entry.function, *entry.aliases)}
    assert not NATIVE_NAMES - registry, NATIVE_NAMES - registry
    native_types = (
        types.BuiltinFunctionType,
        types.MethodDescriptorType,
        types.WrapperDescriptorType,
        types.ClassMethodDescriptorType,
    )
    checked = 0
    for name in sorted(NATIVE_NAMES):
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            try:
                module = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            break
        else:
            continue  # not in this CPython (_interpreters before 3.13): no frame carries it
        obj: object = module
        for part in parts[cut:]:
            obj = getattr(obj, part, None)
        if obj is None:
            continue  # not on this platform
        assert isinstance(obj, native_types), (name, type(obj))
        source = getattr(module, "__file__", None)
        if source and source.endswith(".py"):
            qualname = ".".join(parts[cut:])
            text = Path(source).read_text(encoding="utf-8")
            assert qualname not in _qualnames(text), (name, source)
        checked += 1
    assert checked >= 40  # the check ran: most of them exist on Linux
