"""Audit mode end to end, through the real ``python-sb`` (SPEC §4, issue 5).

``--audit`` enforces nothing and writes nothing to the rule file; it reports, in one run, every
access the current rules would refuse, once each, with the line that would allow it, and appends
them as JSON lines to ``--denials=FILE``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.helpers import base_env, run_python, run_sb

PROGRAMS = Path(__file__).resolve().parent / "programs" / "learn"
SALES = "region,amount\nnorth,120.50\nsouth,80.00\n"


def test_audit_reports_two_new_things_in_one_run_and_changes_no_rule_file(
    home: Path, tmp_path: Path
) -> None:
    scripts = home / "tool"
    scripts.mkdir()
    script = scripts / "report.py"
    shutil.copy(PROGRAMS / "report.py", script)
    footer = home / ".config" / "report" / "footer.txt"
    footer.parent.mkdir(parents=True)
    footer.write_text("-- footer --\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / "sales.csv").write_text(SALES)
    env = base_env(home, {"REPORT_TITLE": "Audit"})
    rule_file = scripts / ".py-sandboxes"

    learn = run_sb([f"--learn={rule_file}", str(script), "sales.csv", "r.txt"], cwd=work, env=env)
    assert learn.returncode == 0, learn.stderr
    before = rule_file.read_bytes()
    listing = sorted(p.name for p in scripts.iterdir())

    # The new version of the script imports statistics and reads ~/.config/report/footer.txt.
    args = [str(script), "sales.csv", "r.txt", "--extra"]
    control = run_python(args, cwd=work, env=env)
    assert control.returncode == 0, control.stderr
    enforced = run_sb(args, cwd=work, env=env)
    assert enforced.returncode != 0  # the rules do stop it (at the first new thing)

    denials = tmp_path / "denials.jsonl"
    audit = run_sb(["--audit", f"--denials={denials}", *args], cwd=work, env=env)
    assert audit.returncode == 0, audit.stderr  # nothing was enforced: it ran to the end
    assert audit.stdout == control.stdout
    assert "-- footer --" in (work / "r.txt").read_text()

    records = [json.loads(line) for line in denials.read_text().splitlines()]
    kinds = {(r["kind"], r["target"]) for r in records}
    assert ("import", "statistics") in kinds, records
    assert any(k == "file" and t.endswith("footer.txt") for k, t in kinds), records
    assert len(kinds) == len(records)  # each access once
    for record in records:
        assert record["suggestion"], record  # the line that would allow it
        assert record["suggestion"] in audit.stderr
    assert "statistics" in audit.stderr and "footer.txt" in audit.stderr

    assert rule_file.read_bytes() == before  # byte for byte
    assert sorted(p.name for p in scripts.iterdir()) == listing  # no backup, no temp file


def test_audit_of_a_run_within_the_rules_reports_nothing(home: Path, project: Path) -> None:
    rule_file = project / ".py-sandboxes"
    code = "import json; print(json.dumps([1]))"
    learn = run_sb([f"--learn={rule_file}", "-c", code], cwd=project, env=base_env(home))
    assert learn.returncode == 0, learn.stderr
    before = rule_file.read_bytes()
    denials = project / "denials.jsonl"
    audit = run_sb(["--audit", f"--denials={denials}", "-c", code], cwd=project, env=base_env(home))
    assert audit.returncode == 0, audit.stderr
    assert audit.stdout == "[1]\n"
    assert "no access outside the rules" in audit.stderr
    assert not denials.exists() or denials.read_text() == ""
    assert rule_file.read_bytes() == before


def test_audit_names_a_deny_of_the_user_profile_and_offers_no_line(
    home: Path, project: Path
) -> None:
    profile = home / ".config" / "py-sandboxes" / "user-py-sandboxes.profile"
    profile.parent.mkdir(parents=True)
    # Audit enforces nothing: the connection is really attempted, so it goes to a closed
    # loopback port (never to an address off this machine).
    profile.write_text("net=DENY|*|127.0.0.0/8|*|OUT\n")
    (project / ".py-sandboxes").write_text(
        'include "~/.config/py-sandboxes/user-py-sandboxes.profile"\n'
        "expose-ro=.\npython-import=socket\nnet=ALLOW|*|*|*|OUT\n"
    )
    code = (
        "import socket\n"
        "s = socket.socket()\n"
        "s.settimeout(0.2)\n"
        "print('tried', s.connect_ex(('127.0.0.2', 9)) is not None)\n"
    )
    denials = project / "denials.jsonl"
    audit = run_sb(["--audit", f"--denials={denials}", "-c", code], cwd=project, env=base_env(home))
    assert audit.returncode == 0, audit.stderr
    assert audit.stdout == "tried True\n"  # not refused: audit enforces nothing
    expected = (
        "refused by 'net=DENY|*|127.0.0.0/8|*|OUT' from "
        "~/.config/py-sandboxes/user-py-sandboxes.profile(1)"
    )
    assert expected in audit.stderr
    assert "no rule line can allow it" in audit.stderr
    records = [json.loads(line) for line in denials.read_text().splitlines()]
    assert [(r["kind"], r["rule"], r["suggestion"]) for r in records] == [
        ("net", "net=DENY|*|127.0.0.0/8|*|OUT", None)
    ]


def test_audit_is_refused_under_the_lock_and_runs_nothing(home: Path, project: Path) -> None:
    """SPEC §2.6 (issue 26 defect 1): ``--audit`` enforces nothing, so under ``learn=false`` it
    is refused like ``--learn``: exit 2, the lock line named, the program never started. The
    control: the same run without the lock does reach the secret it reads."""

    rules = "py-sandbox=true\nos-sandbox=subprocess\nexpose-ro=.\npython-import=os\n"
    program = project / "p.py"
    marker = project / "ran"
    program.write_text(
        "import os, pathlib\n"
        f"pathlib.Path({str(marker)!r}).touch()\n"
        "print(os.environ.get('SECRET_TOKEN'))\n"
    )
    env = base_env(home, {"SECRET_TOKEN": "s3cr3t"})
    (project / ".py-sandboxes").write_text(rules)
    control = run_sb(["--audit", "p.py"], cwd=project, env=env)
    assert control.returncode == 0, control.stderr
    assert control.stdout == "s3cr3t\n"  # audit enforces nothing: this is what the lock stops
    marker.unlink()

    (project / ".py-sandboxes").write_text(rules + "learn=false\n")
    refused = run_sb(["--audit", "p.py"], cwd=project, env=env)
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert not marker.exists()
    assert "--audit refused" in refused.stderr
    assert "locked by learn=false at .py-sandboxes(5)" in refused.stderr
    assert refused.stderr.rstrip().endswith("python-sb: nothing was run")


def test_audit_refuses_an_eval_grant_no_rule_may_give(home: Path, project: Path) -> None:
    """A rule file with an ``eval-*`` grant that no profile may give is refused at start under
    ``--audit`` as in an enforcing run (exit 2, the line named, nothing run): an audit of a
    file that cannot run would report on rules that do not exist. The control: the same file
    without that line is audited and the program runs."""

    program = project / "p.py"
    program.write_text("print('ran')\n")
    rules = f"expose-ro={project}\neval-syntax=arith\n"
    (project / ".py-sandboxes").write_text(rules)
    control = run_sb(["--audit", "p.py"], cwd=project, env=base_env(home))
    assert (control.returncode, control.stdout) == (0, "ran\n"), control.stderr

    (project / ".py-sandboxes").write_text(rules + "eval-call=__import__\n")
    for argv in (["p.py"], ["--audit", "p.py"]):
        refused = run_sb(argv, cwd=project, env=base_env(home))
        assert refused.returncode == 2, (argv, refused.stderr)
        assert refused.stdout == ""
        assert "eval-call=__import__: __import__ cannot be granted" in refused.stderr
