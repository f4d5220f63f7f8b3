"""One record of the variables a rule file reads: ``--explain`` shows it, the hook refuses a
command that sets one of them (through the real command)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import base_env, run_sb


def test_explain_shows_the_variables_the_hook_checks(project: Path, home: Path) -> None:
    (project / ".py-sandboxes").write_text(
        "learn=false\nos-sandbox=${OS_SANDBOX:-subprocess}\nenv=TOKEN=${API_TOKEN}\n"
    )
    (project / "x.py").write_text("print(1)\n")
    env = base_env(home)
    result = run_sb(["--explain", "--json", "x.py"], cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    variables = json.loads(result.stdout)["variables"]
    assert [v["name"] for v in variables] == ["API_TOKEN", "OS_SANDBOX"]
    assert variables[1]["origin"] == ".py-sandboxes(2)"
    text = run_sb(["--explain", "x.py"], cwd=project, env=env).stdout
    assert "variables the rule files read" in text and "OS_SANDBOX  [.py-sandboxes(2)]" in text
    for name in ("OS_SANDBOX", "API_TOKEN"):
        shell = run_sb(["--hook=shell"], cwd=project, env=env, input=f"{name}=x python-sb x.py")
        assert shell.returncode == 1 and name in shell.stdout
    ok = run_sb(["--hook=shell"], cwd=project, env=env, input="OTHER=x python-sb x.py")
    assert (ok.returncode, ok.stdout) == (0, "allowed\n")
