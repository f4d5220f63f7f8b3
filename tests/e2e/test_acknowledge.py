"""``acknowledge=ID`` (docs/rules.md §2.8): a limit the rules say is known is not said at start,
and nothing else changes -- through the real command (issue 26: with ``py-sandbox=false``,
4-6 "NOT enforced" lines on every run, and no way to say "I know")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.providers import get_provider
from tests.helpers import base_env, require, run_sb

PROGRAM = "import sys\nprint(open(sys.argv[1]).read())\n"


def available(name: str) -> bool:
    try:
        return bool(get_provider(name).availability())
    except ConfigError:
        return False


@pytest.mark.parametrize("provider", ["none", "subprocess"])
def test_an_acknowledged_limit_is_not_said_and_nothing_else_changes(
    provider: str, project: Path, home: Path
) -> None:
    secret = home / "secret.txt"
    secret.write_text("s3cret")
    (project / "prog.py").write_text(PROGRAM)
    rules = f"py-sandbox=false\nos-sandbox={provider}\nexpose-ro={project}\n"
    (project / ".py-sandboxes").write_text(rules)
    said = run_sb(["prog.py", str(secret)], cwd=project, env=base_env(home))
    assert said.returncode == 0, said.stderr
    assert "NOT enforced" in said.stderr
    (project / ".py-sandboxes").write_text(rules + "acknowledge=all.no-enforcer\n")
    quiet = run_sb(["prog.py", str(secret)], cwd=project, env=base_env(home))
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "s3cret\n", "")
    text = run_sb(["--explain", "prog.py"], cwd=project, env=base_env(home))
    assert text.returncode == 0, text.stderr
    limit = [line for line in text.stdout.splitlines() if "NOT enforced" in line]
    assert limit and limit[0].endswith(
        "(not said at start: acknowledge=all.no-enforcer, .py-sandboxes(4))"
    ), text.stdout
    data = run_sb(["--explain", "--json", "prog.py"], cwd=project, env=base_env(home))
    items = json.loads(data.stdout)["provider"]["limits"]
    assert [item["acknowledged"] for item in items if item["key"] == "all.no-enforcer"] == [
        ".py-sandboxes(4)"
    ]


def test_every_limit_explain_names_can_be_acknowledged(project: Path, home: Path) -> None:
    """Under bwrap with ``py-sandbox=false`` a run says several limits; ``--explain`` names the
    id of each (``said at start unless acknowledge=ID``), and acknowledging those ids (here on
    the command line, a list key like the others) silences every one of them."""

    require(available("bwrap"), "os-sandbox=bwrap cannot run on this machine")
    (project / ".py-sandboxes").write_text("py-sandbox=false\nos-sandbox=bwrap\nexpose-ro=.\n")
    said = run_sb(["-c", "print('ran')"], cwd=project, env=base_env(home))
    assert said.returncode == 0, said.stderr
    lines = said.stderr.splitlines()
    assert len(lines) >= 2, said.stderr
    data = run_sb(["--explain", "--json", "-c", "pass"], cwd=project, env=base_env(home))
    ids = [
        item["key"] for item in json.loads(data.stdout)["provider"]["limits"] if item["at_start"]
    ]
    assert len(ids) == len(lines), (ids, lines)
    text = run_sb(["--explain", "-c", "pass"], cwd=project, env=base_env(home))
    for key in ids:
        assert f"(said at start unless acknowledge={key})" in text.stdout
    option = "--acknowledge=" + ",".join(ids)
    quiet = run_sb([option, "-c", "print('ran')"], cwd=project, env=base_env(home))
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "ran\n", "")
    some = run_sb([f"--acknowledge={ids[0]}", "-c", "pass"], cwd=project, env=base_env(home))
    left = some.stderr.splitlines()
    assert len(left) == len(lines) - 1 and set(left) < set(lines), some.stderr


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (
            "all.no-enforcr",
            "acknowledge=all.no-enforcr: no announced limit has this id (did you mean "
            "all.no-enforcer?)",
        ),
        (
            "net.tcp-host-part-refused",
            "acknowledge=net.tcp-host-part-refused: net.tcp-host-part-refused is not an "
            "announced limit (python-sb refuses such a run)",
        ),
        ("NoEnforcer", "bad acknowledge item 'NoEnforcer': the id of an announced limit"),
    ],
)
def test_what_cannot_be_acknowledged_is_refused(
    item: str, message: str, project: Path, home: Path
) -> None:
    (project / ".py-sandboxes").write_text(f"expose-ro=.\nacknowledge={item}\n")
    done = run_sb(["-c", "print('ran')"], cwd=project, env=base_env(home))
    assert done.returncode == 2
    assert done.stdout == ""
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"python-sb: .py-sandboxes(2): {message}"), done.stderr
    assert done.stderr.splitlines()[-1] == "python-sb: nothing was run"


def test_a_refusal_stays_a_refusal(project: Path, home: Path) -> None:
    """Acknowledging every announced limit of Landlock does not let a run start that Landlock
    refuses (a host-restricted TCP rule with py-sandbox=false)."""

    require(available("landlock"), "os-sandbox=landlock cannot run on this machine")
    from pysandboxes.providers.limits import LIMIT, LIMITS

    every = ",".join(limit.key for limit in LIMITS if limit.status == LIMIT)
    (project / ".py-sandboxes").write_text(
        "os-sandbox=landlock\npy-sandbox=false\nexpose-ro=.\n"
        "net=ALLOW|TCP|127.0.0.1|443|OUT\nnet=DENY|TCP|127.0.0.2|443|OUT\n"
        f"acknowledge={every}\n"
    )
    done = run_sb(["-c", "print('ran')"], cwd=project, env=base_env(home))
    assert done.returncode == 2
    assert "ran" not in done.stdout
    assert "cannot enforce these rules" in done.stderr
