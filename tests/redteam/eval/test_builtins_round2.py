"""The second round of eval attacks through the other way in: the ``exec`` builtin of a
program run by the real python-sb, whose rule file has the corpus's ``eval-*`` lines for the
default profile (in-process bounds: what must hold there is everything but a hard kill).

Each attack's control is ``test_eval_redteam.test_attack_reaches_its_objective_without_the_
guard`` (the same source under plain ``exec``). Here the program runs every attack of
``corpus.SECOND_ROUND`` with the profile it names and reports the exception class each one
raised; the whole program must end within its timeout (a C loop nothing stops would hang it).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import base_env, require, run_sb
from tests.redteam.eval.corpus import (
    CALC_RULES,
    RULES,
    SECOND_ROUND,
    TOOL_RULES,
    Attack,
    HostUnchanged,
)
from tests.redteam.eval.deadlines import load_factor, scaled

PROGRAM = """\
import json, sys
attacks = json.loads(open("attacks.json").read())
seen = {}
for name, source in attacks:
    try:
        exec(source, {"config": {"limit": 10}, "rows": [1, 2, 3]})
        seen[name] = None
    except Exception as exc:
        seen[name] = [klass.__name__ for klass in type(exc).__mro__]
sys.stdout.write("\\n" + json.dumps(seen) + "\\n")
"""


def _names(held: Any) -> list[str]:
    kinds = held if isinstance(held, tuple) else (held,)
    return [kind.__name__ for kind in kinds]


def _rule_file(rules: list[str], factor: float) -> str:
    head = ["expose-ro=.", "python-import=json"]
    if rules is CALC_RULES:
        head.append("python-import=sympy")
    # most attacks are held by something else than time: the deadline follows the load
    # (deadlines.py; the same lines at low load)
    return "\n".join([*head, *scaled(rules, factor)]) + "\n"


PROFILES = {"RULES": RULES, "CALC_RULES": CALC_RULES, "TOOL_RULES": TOOL_RULES}


@pytest.mark.parametrize("profile", list(PROFILES))
def test_second_round_is_held_through_the_exec_builtin(
    profile: str, project: Path, home: Path
) -> None:
    rules = PROFILES[profile]
    if rules is CALC_RULES:
        require(importlib.util.find_spec("sympy"), "sympy is not installed (pip install -e .[dev])")
    attacks: list[Attack] = [a for a in SECOND_ROUND if (a.rules or RULES) is rules]
    assert attacks
    factor = load_factor()
    (project / ".py-sandboxes").write_text(_rule_file(rules, factor))
    (project / "attacks.json").write_text(json.dumps([[a.name, a.source] for a in attacks]))
    (project / "prog.py").write_text(PROGRAM)
    done = run_sb(
        ["--os-sandbox=none", "prog.py"], cwd=project, env=base_env(home), timeout=120 * factor
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    for attack in attacks:
        got = seen[attack.name]
        if attack.held is HostUnchanged:
            assert got is None, (attack.name, got)
        else:
            assert got is not None, f"{attack.name} ran to its end"
            assert set(_names(attack.held)) & set(got), (attack.name, got)
