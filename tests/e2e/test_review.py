"""``python-sb --review``: what a change to rule files grants or removes, through the real
command, on two files and on git ranges."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import base_env, require_tool, run_sb

OLD = """\
py-sandbox=true
os-sandbox=bwrap
learn=false
python-import=csv
net=ALLOW|TCP|api.example.com|443|OUT
include "~/.config/py-sandboxes/user-py-sandboxes.profile"
"""

WIDER = """\
py-sandbox=true
os-sandbox=${OS_SANDBOX:-none}
python-import=csv, socket
expose-rw=~
env=AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}
net=ALLOW|*|*|*|OUT
python-api=ALLOW:process-exec
include "./.local.py-sandboxes"
"""

NARROWER = """\
# comments and order do not matter
include "~/.config/py-sandboxes/user-py-sandboxes.profile"
learn=false
os-sandbox=bwrap
py-sandbox=true
python-import=csv
"""


def review(args: list[str], cwd: Path, home: Path) -> tuple[int, str, str]:
    result = run_sb(["--review", *args], cwd=cwd, env=base_env(home))
    return result.returncode, result.stdout, result.stderr


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    return path


def test_high_risk_rights_fail_the_gate(project: Path, home: Path) -> None:
    write(project, "old.py-sandboxes", OLD)
    write(project, "new.py-sandboxes", WIDER)
    write(project, ".local.py-sandboxes", "python-import=json\n")
    status, stdout, stderr = review(
        ["old.py-sandboxes", "new.py-sandboxes", "--json"], project, home
    )
    assert status == 1, stderr
    data = json.loads(stdout)
    assert data["exit_status"] == 1
    [report] = data["files"]
    changes = {(c["change"], c["rule"]): c for c in report["changes"]}
    high = {key for key, c in changes.items() if c["risk"] == "high"}
    assert {
        ("added", "expose-rw=~"),
        ("added", "env=AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}"),
        ("added", "net=ALLOW|*|*|*|OUT"),
        ("added", "python-api=ALLOW:process-exec"),
        ("added", 'include "./.local.py-sandboxes"'),
        ("removed", 'include "~/.config/py-sandboxes/user-py-sandboxes.profile"'),
        ("changed", "lock: learn=false -> (none)"),
        ("changed", "os-sandbox: bwrap -> none"),
        ("changed", "os-sandbox variable: (none) -> os-sandbox=${OS_SANDBOX:-none}"),
    } <= high
    # riskiest first; what an include brings in is named, with its origin
    risks = [c["risk"] for c in report["changes"]]
    assert risks == sorted(risks, key=["high", "review", "low"].index)
    assert "python-import=json" in changes[("added", 'include "./.local.py-sandboxes"')]["why"]
    assert changes[("added", "python-import=json")]["origin"] == ".local.py-sandboxes(1)"
    assert changes[("added", "python-import=socket")]["risk"] == "low"
    assert changes[("removed", "net=ALLOW|TCP|api.example.com|443|OUT")]["risk"] == "low"
    # the text form, for people
    status, text, _ = review(["old.py-sandboxes", "new.py-sandboxes"], project, home)
    assert status == 1
    assert "HIGH   + expose-rw=~" in text
    assert "a human must review these" in text


def test_a_narrowing_change_passes(project: Path, home: Path) -> None:
    write(project, "old.py-sandboxes", WIDER)
    write(project, "new.py-sandboxes", NARROWER)
    write(project, ".local.py-sandboxes", "")
    status, stdout, _ = review(["old.py-sandboxes", "new.py-sandboxes", "--json"], project, home)
    assert status == 0, stdout
    changes = json.loads(stdout)["files"][0]["changes"]
    assert all(c["risk"] != "high" for c in changes)
    assert {"change": "removed", "rule": "expose-rw=~"}.items() <= next(
        c for c in changes if c["rule"] == "expose-rw=~"
    ).items()


def test_comments_and_order_are_no_change(project: Path, home: Path) -> None:
    write(project, "old.py-sandboxes", OLD.replace("net=ALLOW|TCP|api.example.com|443|OUT\n", ""))
    write(project, "new.py-sandboxes", NARROWER)
    status, stdout, _ = review(["old.py-sandboxes", "new.py-sandboxes"], project, home)
    assert status == 0
    assert "no change in the rights" in stdout


def test_fail_on(project: Path, home: Path) -> None:
    write(project, "old.py-sandboxes", NARROWER)
    write(project, "new.py-sandboxes", NARROWER + "expose-ro=/usr/share\n")
    assert review(["old.py-sandboxes", "new.py-sandboxes"], project, home)[0] == 0
    assert review(["old.py-sandboxes", "new.py-sandboxes", "--fail-on=any"], project, home)[0] == 1
    write(project, "new.py-sandboxes", WIDER)
    write(project, ".local.py-sandboxes", "")
    status, stdout, _ = review(
        ["old.py-sandboxes", "new.py-sandboxes", "--fail-on=never"], project, home
    )
    assert status == 0
    assert "not a gate" in stdout


def test_a_new_file_that_does_not_load_fails(project: Path, home: Path) -> None:
    write(project, "old.py-sandboxes", NARROWER)
    write(project, "new.py-sandboxes", "frobnicate=1\n")
    status, stdout, _ = review(["old.py-sandboxes", "new.py-sandboxes", "--json"], project, home)
    assert status == 1
    [change] = json.loads(stdout)["files"][0]["changes"]
    assert change["change"] == "error"
    assert "frobnicate" in change["why"]


def test_bad_arguments(project: Path, home: Path) -> None:
    assert review(["a", "b", "c"], project, home)[0] == 2
    status, _, stderr = review(["--frobnicate"], project, home)
    assert status == 2
    assert "unknown option" in stderr
    status, _, stderr = review(["missing.py-sandboxes", "other.py-sandboxes"], project, home)
    assert status == 2
    assert "cannot be read" in stderr
    status, _, stderr = review([], project, home)  # not a git repository
    assert status == 2
    assert "git" in stderr


@pytest.fixture
def repo(project: Path, home: Path) -> Path:
    require_tool("git")
    env = base_env(home, {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"})
    env.update({"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (project / "skill").mkdir()
    write(project / "skill", ".py-sandboxes", NARROWER)
    write(project, "README.md", "x\n")
    git("add", "-A")
    git("commit", "-qm", "first")
    write(project / "skill", ".py-sandboxes", NARROWER + "expose-rw=/tmp/out\n")
    write(project, "README.md", "y\n")
    git("commit", "-qam", "second")
    return project


def test_git_range(repo: Path, home: Path) -> None:
    status, stdout, _ = review(["HEAD~1..HEAD", "--json"], repo, home)
    assert status == 1
    [report] = json.loads(stdout)["files"]
    assert report["path"] == str(repo / "skill" / ".py-sandboxes")
    assert [(c["change"], c["rule"]) for c in report["changes"]] == [
        ("added", "expose-rw=/tmp/out")
    ]
    status, stdout, _ = review(["main...HEAD"], repo, home)
    assert (status, stdout) == (0, "python-sb --review: no rule file changed\n")
    status, _, _ = review(["nosuchrev..HEAD"], repo, home)
    assert status == 2


def test_working_tree_deleted_and_new_files(repo: Path, home: Path) -> None:
    assert review([], repo, home)[1] == "python-sb --review: no rule file changed\n"
    (repo / "skill" / ".py-sandboxes").unlink()
    write(repo, "ci.py-sandboxes", "os-sandbox=bwrap\nlearn=false\nenv=CI=true\n")
    status, stdout, _ = review(["--json"], repo, home)
    assert status == 1
    files = {Path(f["path"]).name: f for f in json.loads(stdout)["files"]}
    deleted = files[".py-sandboxes"]
    assert deleted["new"] is None
    assert deleted["changes"][0]["rule"] == "(the whole rule file)"
    assert deleted["changes"][0]["risk"] == "high"
    added = files["ci.py-sandboxes"]
    assert added["old"] is None
    rules = {c["rule"]: c["risk"] for c in added["changes"]}
    assert rules["env=CI=true"] == "high"
    assert rules["os-sandbox: subprocess -> bwrap"] == "review"


def test_a_new_secret_line_is_high_risk(project: Path, home: Path) -> None:
    """issue 32: ``secret=`` sends a real credential to its hosts: a human decides."""

    base = "net=ALLOW|TCP|api.example.com|443|OUT\n"
    write(project, "old.py-sandboxes", base)
    write(project, "new.py-sandboxes", base + "secret=API_TOKEN|api.example.com|Authorization\n")
    status, stdout, stderr = review(
        ["old.py-sandboxes", "new.py-sandboxes", "--json"], project, home
    )
    assert status == 1, stderr
    [report] = json.loads(stdout)["files"]
    [change] = report["changes"]
    assert (change["risk"], change["change"], change["rule"]) == (
        "high",
        "added",
        "secret=API_TOKEN|api.example.com|Authorization",
    )
    assert "API_TOKEN to api.example.com" in change["why"]
