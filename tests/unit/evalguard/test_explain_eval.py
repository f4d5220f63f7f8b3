"""--explain shows every eval-* profile with its effective rules and budgets."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import base_env, run_sb


def test_explain_lists_profiles(project: Path, home: Path) -> None:
    (project / ".py-sandboxes").write_text(
        "eval-syntax=arith,loop\neval-call=len\neval-timeout=500ms\n"
        "eval-syntax:calc=arith\neval-import:calc=math\n"
    )
    done = run_sb(["--explain"], cwd=project, env=base_env(home))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "profile default (used by eval/exec/compile and guarded_eval()):" in text
    assert "profile calc (used by guarded_eval(profile='calc')):" in text
    assert "eval-timeout=0.5s," in text and "eval-max-iterations=1000000 [default]" in text
    data = json.loads(run_sb(["--explain", "--json"], cwd=project, env=base_env(home)).stdout)
    calc = next(p for p in data["eval"] if p["profile"] == "calc")
    assert calc["imports"] == ["math"] and calc["syntax"] == ["arith"]


def test_explain_without_eval_rules_has_no_eval_section(project: Path, home: Path) -> None:
    (project / ".py-sandboxes").write_text("expose-ro=.\n")
    done = run_sb(["--explain", "--json"], cwd=project, env=base_env(home))
    assert json.loads(done.stdout)["eval"] == []
