"""``none`` and ``subprocess`` with ``py-sandbox=false`` enforce nothing but ``env=``: a run
whose rules hold more says so at start (limit ``all.no-enforcer``), through the real command;
a rule file with only settings and ``env=`` (python-sb as a plain launcher) stays silent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pysandboxes.providers import limits
from tests.helpers import base_env, run_sb

PROGRAM = "import sys\nprint(open(sys.argv[1]).read())\n"


def notice_line(provider: str, kinds: str) -> str:
    text = limits.notice("all.no-enforcer", False, kinds=kinds).text
    return f"python-sb: {provider}, py-sandbox=false: {text}"


@pytest.mark.parametrize("provider", ["none", "subprocess"])
def test_unenforced_rules_are_announced(provider: str, project: Path, home: Path) -> None:
    """The warning names the rule kinds that are lost, and it is true: the program reads a
    file no rule exposes."""

    secret = home / "secret.txt"
    secret.write_text("s3cret")
    (project / "prog.py").write_text(PROGRAM)
    (project / ".py-sandboxes").write_text(
        f"py-sandbox=false\nos-sandbox={provider}\nexpose-ro={project}\npython-import=sys\n"
    )
    result = run_sb(["prog.py", str(secret)], cwd=project, env=base_env(home))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "s3cret\n"
    assert notice_line(provider, "expose-ro, python-import") in result.stderr.splitlines()
    explained = run_sb(["--explain", "--json", "prog.py"], cwd=project, env=base_env(home))
    assert explained.returncode == 0, explained.stderr
    assert "all.no-enforcer" in {
        item["key"] for item in json.loads(explained.stdout)["provider"]["limits"]
    }


@pytest.mark.parametrize("provider", ["none", "subprocess"])
def test_layer_on_or_launcher_only_is_silent(provider: str, project: Path, home: Path) -> None:
    """With the Python layer on the rules hold (the read is refused) and nothing is said; with
    the layer off and only settings and env= lines nothing is lost and nothing is said; a
    learning run says it enforces nothing in its own words."""

    secret = home / "secret.txt"
    secret.write_text("s3cret")
    (project / "prog.py").write_text(PROGRAM)
    env = base_env(home)
    rules = project / ".py-sandboxes"
    rules.write_text(f"os-sandbox={provider}\nexpose-ro={project}\npython-import=sys\n")
    on = run_sb(["prog.py", str(secret)], cwd=project, env=env)
    assert on.returncode == 1 and "RulePermissionError" in on.stderr
    assert "all.no-enforcer" not in on.stderr and "py-sandbox=false" not in on.stderr
    rules.write_text(f"py-sandbox=false\nos-sandbox={provider}\nenv=LANG=C\n")
    bare = run_sb(["prog.py", str(secret)], cwd=project, env=env)
    assert (bare.returncode, bare.stdout, bare.stderr) == (0, "s3cret\n", "")
    rules.write_text(f"py-sandbox=false\nos-sandbox={provider}\nexpose-ro={project}\n")
    learned = project / "learned.py-sandboxes"
    learning = run_sb([f"--learn={learned}", "prog.py", str(secret)], cwd=project, env=env)
    assert learning.returncode == 0, learning.stderr
    assert "py-sandbox=false: no Python layer" not in learning.stderr
