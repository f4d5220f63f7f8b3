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
