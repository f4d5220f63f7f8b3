"""LearningSession with real child processes writing real records into the real pipe."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
from pathlib import Path

from pysandboxes.learn.session import LearningSession
from pysandboxes.policy import load_policy
from pysandboxes.policy.model import Policy


def writer_child(fd: int, code: str, *, stdout: int | None = None) -> subprocess.Popen[bytes]:
    """A child that gets the session's descriptor and runs ``code`` with ``out`` bound to it."""

    prelude = f"import json, os, sys, time\nout = os.fdopen({fd}, 'w', buffering=1)\n"
    return subprocess.Popen([sys.executable, "-c", prelude + code], pass_fds=(fd,), stdout=stdout)


def session(
    tmp_path: Path, mode: str = "learn", **kw: object
) -> tuple[LearningSession, io.StringIO]:
    err = io.StringIO()
    args: dict[str, object] = dict(
        mode=mode,
        output=str(tmp_path / "rules"),
        cwd=str(tmp_path),
        program_kind="code",
        program=None,
        denials_file=None,
        environ={
            "HOME": str(tmp_path / "home"),
            "PATH": "/usr/bin",
            "SEEN": "1",
            "KEEP": "1",
            "REPORT": "r",
        },
        stderr=err,
    )
    args.update(kw)
    return LearningSession(Policy(), **args), err  # type: ignore[arg-type]


REVIEWED = "# reviewed\npython-import=json  # needed\n"


def test_records_reach_an_existing_rule_file_after_sigkill(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    rules = tmp_path / "rules"
    rules.write_text(REVIEWED)
    learn, err = session(tmp_path)
    assert "grants whatever the program does" in err.getvalue()
    child = writer_child(
        learn.child_fd(),
        "for name in ('json', 'csv'):\n"
        "    out.write(json.dumps({'kind': 'import', 'name': name}) + '\\n')\n"
        f"path = {str(tmp_path / 'data' / 'x')!r}\n"
        "out.write(json.dumps({'kind': 'file', 'op': 'read', 'path': path}) + '\\n')\n"
        "out.write(json.dumps({'kind': 'env', 'name': 'REPORT'}))\n"  # no final newline
        "out.flush()\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n",
        stdout=subprocess.PIPE,
    )
    learn.start()
    assert learn.child_fd() == -1  # the parent's copy is closed
    assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    child.send_signal(signal.SIGKILL)
    status = child.wait(timeout=10)
    learn.finish(status)
    learn.finish(status)  # a second call does nothing
    text = rules.read_text()
    assert text.startswith(REVIEWED)
    added = text[len(REVIEWED) :]
    assert "python-import=csv" in added
    assert "python-import=json" not in added  # already granted by the file
    assert "expose-ro=./data" in added
    assert "env=REPORT=${REPORT}" in added.splitlines()  # the unterminated last line counts
    assert learn.backup is not None
    assert Path(learn.backup).read_text() == REVIEWED
    # The parser reads the block back as learned rules.
    policy = load_policy(str(rules), environ={"HOME": str(tmp_path)}, cwd=str(tmp_path))
    assert {r.name for r in policy.python_import} == {"json", "csv"}
    assert all(r.origin.learned for r in policy.env)
    assert "status -9" in err.getvalue()


def test_a_child_that_records_a_lot_never_blocks(tmp_path: Path) -> None:
    learn, _ = session(tmp_path, output=str(tmp_path / "new-dir-missing" / "rules"))
    child = writer_child(
        learn.child_fd(),
        "line = json.dumps({'kind': 'env', 'name': 'X' * 200}) + '\\n'\n"
        "for i in range(20000):\n"
        "    out.write(line)\n"
        "out.write(json.dumps({'kind': 'env', 'name': 'LAST'}) + '\\n')\n",
    )
    learn.start()
    assert child.wait(timeout=60) == 0  # 4 MB through a 64 kB pipe: the reader keeps up
    learn.finish(0)
    names = {a.name for a in learn.recording.accesses}  # type: ignore[union-attr]
    assert names == {"X" * 200, "LAST"}


def test_a_grandchild_holding_the_pipe_does_not_hold_finish(tmp_path: Path) -> None:
    learn, _ = session(tmp_path)
    child = writer_child(
        learn.child_fd(),
        "out.write(json.dumps({'kind': 'env', 'name': 'SEEN'}) + '\\n')\n"
        "import subprocess\n"
        f"subprocess.Popen(['sleep', '30'], pass_fds=({learn.child_fd()},))\n",
    )
    learn.start()
    assert child.wait(timeout=30) == 0
    learn.finish(0)  # returns although `sleep` still holds a write end
    assert learn.learned is not None
    assert learn.learned.rules == [("env", "SEEN=${SEEN}")]


def test_nothing_new_writes_nothing(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.write_text(REVIEWED)
    before = rules.stat()
    learn, err = session(tmp_path)
    child = writer_child(
        learn.child_fd(), "out.write(json.dumps({'kind': 'import', 'name': 'json'}) + '\\n')\n"
    )
    learn.start()
    learn.finish(child.wait(timeout=30))
    assert rules.read_text() == REVIEWED
    assert rules.stat().st_mtime_ns == before.st_mtime_ns
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rules"]  # no backup either
    assert "nothing new to add" in err.getvalue()


def test_an_unreadable_rule_file_is_left_alone_and_the_rules_are_printed(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.write_text("this is not a rule\n")
    learn, err = session(tmp_path)
    child = writer_child(
        learn.child_fd(), "out.write(json.dumps({'kind': 'env', 'name': 'KEEP'}) + '\\n')\n"
    )
    learn.start()
    learn.finish(child.wait(timeout=30))
    assert rules.read_text() == "this is not a rule\n"
    assert "env=KEEP=${KEEP}" in err.getvalue()
    assert "rules(1)" in err.getvalue()


def test_an_unwritable_destination_prints_the_rules(tmp_path: Path) -> None:
    learn, err = session(tmp_path, output=str(tmp_path / "no" / "such" / "dir" / "rules"))
    child = writer_child(
        learn.child_fd(), "out.write(json.dumps({'kind': 'env', 'name': 'KEEP'}) + '\\n')\n"
    )
    learn.start()
    learn.finish(child.wait(timeout=30))
    assert "cannot write" in err.getvalue()
    assert "env=KEEP=${KEEP}" in err.getvalue()


def test_audit_reports_each_denial_once_and_appends_json(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.write_text(REVIEWED)
    denials = tmp_path / "denials.jsonl"
    denials.write_text('{"earlier": true}\n')
    learn, err = session(tmp_path, mode="audit", denials_file=str(denials))
    sock = {
        "kind": "import",
        "target": "socket",
        "rule": None,
        "origin": None,
        "suggestion": "python-import=socket",
        "detail": None,
    }
    net = {
        "kind": "net",
        "target": "[10.1.1.1]:80",
        "rule": "net=DENY|*|10.0.0.0/8|*|OUT",
        "origin": "~/.config/p(1)",
        "suggestion": None,
        "detail": None,
    }
    child = writer_child(
        learn.child_fd(),
        f"d1 = {sock!r}\nd2 = {net!r}\n"
        "for _ in range(3):\n"
        "    out.write(json.dumps({'kind': 'import', 'name': 'socket', 'denial': d1}) + '\\n')\n"
        "out.write(json.dumps({'kind': 'import', 'name': 'json'}) + '\\n')\n"
        "out.write(json.dumps({'kind': 'net', 'proto': 'TCP', 'host': None, 'ip': '10.1.1.1',"
        " 'port': 80, 'dir': 'OUT', 'denial': d2}) + '\\n')\n",
    )
    learn.start()
    learn.finish(child.wait(timeout=30))
    assert rules.read_text() == REVIEWED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["denials.jsonl", "rules"]
    report = err.getvalue()
    assert "2 accesses the rules would refuse" in report
    assert report.count("import socket") == 1
    assert "to allow it: python-import=socket" in report
    assert "refused by 'net=DENY|*|10.0.0.0/8|*|OUT' from ~/.config/p(1)" in report
    lines = denials.read_text().splitlines()
    assert lines[0] == '{"earlier": true}'
    assert [json.loads(x)["target"] for x in lines[1:]] == ["socket", "[10.1.1.1]:80"]


def test_audit_with_nothing_outside_the_rules(tmp_path: Path) -> None:
    learn, err = session(tmp_path, mode="audit", denials_file=str(tmp_path / "d"))
    learn.start()
    learn.finish(0)
    assert "no access outside the rules" in err.getvalue()
    assert not (tmp_path / "d").exists()
    assert not (tmp_path / "rules").exists()


def test_finish_without_start_still_closes_and_reports(tmp_path: Path) -> None:
    learn, err = session(tmp_path)
    learn.finish(None)  # the launcher failed before spawning the child
    assert learn.child_fd() == -1
    assert learn.learned is not None and learn.learned.empty
    assert "nothing to learn from this run; no rule file written" in err.getvalue()


def test_audit_env_reads_not_passed_and_denials_already_appended_by_the_guard(
    tmp_path: Path,
) -> None:
    from pysandboxes.policy import parse_text

    policy = parse_text(
        "env=GRANTED=${GRANTED}\nunenv=SECRET_*\n", str(tmp_path / "rules"), environ={}
    )
    denials = tmp_path / "denials.jsonl"
    err = io.StringIO()
    audit = LearningSession(
        policy,
        mode="audit",
        output=None,
        cwd=str(tmp_path),
        program_kind="code",
        program=None,
        denials_file=str(denials),
        environ={"GRANTED": "1", "WANTED": "1", "SECRET_KEY": "s", "TMPDIR": "/tmp"},
        stderr=err,
    )
    sock = {
        "kind": "import",
        "target": "socket",
        "rule": None,
        "origin": None,
        "suggestion": "python-import=socket",
        "detail": None,
    }
    child = writer_child(
        audit.child_fd(),
        f"d = {sock!r}\n"
        # The guard appends to --denials itself, and records the same denial.
        f"open({str(denials)!r}, 'a').write(json.dumps(d) + '\\n')\n"
        "out.write(json.dumps({'kind': 'import', 'name': 'socket', 'denial': d}) + '\\n')\n"
        "for name in ('GRANTED', 'WANTED', 'SECRET_KEY', 'TMPDIR', 'UNSET_PROBE'):\n"
        "    out.write(json.dumps({'kind': 'env', 'name': name}) + '\\n')\n",
    )
    audit.start()
    audit.finish(child.wait(timeout=30))
    records = [json.loads(line) for line in denials.read_text().splitlines()]
    assert [(r["kind"], r["target"]) for r in records] == [
        ("import", "socket"),
        ("env", "WANTED"),
        ("env", "SECRET_KEY"),
    ]
    assert records[1]["suggestion"] == "env=WANTED=${WANTED}"
    assert records[2]["suggestion"] is None and records[2]["rule"] == "unenv=SECRET_*"
    assert "3 accesses the rules would refuse" in err.getvalue()
