"""eval/exec/compile in a program run by the real python-sb with eval-* rules."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import base_env, run_python, run_sb

RULES = """\
expose-ro=.
python-import=collections,dataclasses,json,pysandboxes
eval-syntax=arith,compare,loop,assign,func,comprehension,subscript,fstring,conditional
eval-call=len,range,sum,sorted
eval-attribute=str-methods
{extra}
"""

PROGRAM = """\
import collections, dataclasses, json
P = collections.namedtuple("P", "x y")          # library code generation: the original exec

@dataclasses.dataclass
class D:
    a: int

out = {"lib": [repr(P(1, 2)), repr(D(3))]}
out["eval"] = eval("1 + 2 * 3")
ns = {"data": [3, 1, 2]}
exec("r = sorted(data)\\nt = sum(x * x for x in data)", ns)
out["written_back"] = [ns.get("r"), ns.get("t")]
code = compile("len(data)", "<x>", "eval")
out["compiled"] = eval(code, ns)
refused = {}
for name, src in [("dunder", "().__class__"), ("open", "open('/etc/hostname')"),
                  ("alloc", "'a'.center(10**9)"), ("loop", "sum(range(10**12))")]:
    try:
        eval(src)
        refused[name] = None
    except Exception as exc:
        import pysandboxes
        found = pysandboxes.sandbox_denials(exc)
        refused[name] = [type(exc).__name__, [d.suggestion for d in found]]
out["refused"] = refused
print(json.dumps(out))
"""


def _run(project: Path, home: Path, extra: str = "") -> dict:
    (project / ".py-sandboxes").write_text(RULES.format(extra=extra))
    (project / "prog.py").write_text(PROGRAM)
    done = run_sb(["--os-sandbox=none", "prog.py"], cwd=project, env=base_env(home))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_program_builtins_are_guarded(project: Path, home: Path) -> None:
    out = _run(project, home, "eval-namespace=adaptive")
    assert out["lib"] == ["P(x=1, y=2)", "D(a=3)"]
    assert out["eval"] == 7
    assert out["written_back"] == [[1, 2, 3], 14]
    assert out["compiled"] == 3
    assert out["refused"]["dunder"][0] == "EvalSyntaxRejected"
    assert out["refused"]["open"][0] == "EvalSyntaxRejected"
    assert out["refused"]["alloc"][0] == "EvalMemoryError"
    assert out["refused"]["loop"][0] == "EvalTimeout"
    # control: plain python reaches what the dunder and open sources aim at
    (project / "control.py").write_text(
        "print(eval('().__class__'), len(eval(\"open('/etc/hostname')\").read()) >= 0)"
    )
    plain = run_python(["control.py"], cwd=project, env=base_env(home))
    assert plain.stdout.split() == ["<class", "'tuple'>", "True"]


def test_closed_namespace_writes_nothing_back(project: Path, home: Path) -> None:
    out = _run(project, home)
    assert out["written_back"] == [None, None]


def test_without_eval_rules_source_text_stays_refused(project: Path, home: Path) -> None:
    (project / ".py-sandboxes").write_text("expose-ro=.\n")
    (project / "p.py").write_text("print(eval('1 + 1'))\n")
    done = run_sb(["--os-sandbox=none", "p.py"], cwd=project, env=base_env(home))
    assert done.returncode == 1
    assert "RuleApiPermissionError" in done.stderr and "dynamic-code" in done.stderr


def test_guarded_eval_refuses_rules_argument_under_python_sb(project: Path, home: Path) -> None:
    (project / ".py-sandboxes").write_text(
        "expose-ro=.\npython-import=pysandboxes\neval-syntax:calc=arith\n"
    )
    (project / "p.py").write_text(
        "import pysandboxes\n"
        "print(pysandboxes.guarded_eval('6 * 7', profile='calc'))\n"
        "try:\n"
        "    pysandboxes.guarded_eval('1', rules=['eval-call=open'])\n"
        "except pysandboxes.ConfigError as exc:\n"
        "    print('refused', 'rule file' in str(exc))\n"
    )
    done = run_sb(["--os-sandbox=none", "p.py"], cwd=project, env=base_env(home))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["42", "refused", "True"]


def test_a_grant_no_rule_may_give_stops_the_run(project: Path, home: Path) -> None:
    (project / ".py-sandboxes").write_text("expose-ro=.\neval-call=open\n")
    (project / "p.py").write_text("print('ran')\n")
    done = run_sb(["--os-sandbox=none", "p.py"], cwd=project, env=base_env(home))
    assert done.returncode == 2
    assert "ran" not in done.stdout
    assert "cannot be granted" in done.stderr


def test_library_string_evaluation_refused_while_a_source_runs(project: Path, home: Path) -> None:
    (project / ".py-sandboxes").write_text(
        "expose-ro=.\npython-import=collections\n"
        "eval-syntax=import,assign\neval-import=collections\n"
    )
    (project / "p.py").write_text(
        "import collections\n"
        "Q = collections.namedtuple('Q', 'a')  # the program's own call: as usual\n"
        "try:\n"
        "    exec(\"import collections\\nP = collections.namedtuple('P', 'x y')\")\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, 'sympify' in str(exc))\n"
    )
    done = run_sb(["--os-sandbox=none", "p.py"], cwd=project, env=base_env(home))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["RuleEvalError", "True"]
