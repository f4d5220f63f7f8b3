"""Reads that no rule can refuse (``files.reads_are_free``): when the table has a row for
``/`` and no ``ignore=`` rule, a read of an absolute path is allowed without resolving it.
These tests check the conditions at arming, and through an armed interpreter that what could
still be refused is refused as before: a path type the guard cannot read, a write through a
link, and that learn/audit modes still record the resolved path of a read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pysandboxes.guard import files
from pysandboxes.policy import parse_text
from pysandboxes.runtime import RunContext
from tests.unit.guard.harness import run_armed


def _table(tmp_path: Path, rules: str, flavour: str | None = None) -> files.PathTable:
    policy = parse_text(rules, str(tmp_path / ".py-sandboxes"), cwd=str(tmp_path))
    return files.build_table(policy, RunContext(), (), flavour)


@pytest.mark.parametrize(
    ("rules", "recording", "free"),
    [
        ("expose-ro=/\n", False, True),
        ("expose-rw=/\n", False, True),
        ("expose-ro=/\nexpose-rw=/tmp\n", False, True),
        ("expose-ro=/\n", True, False),  # learn/audit record the resolved path
        ("expose-ro=/\nignore=.env\n", False, False),  # a resolved name may be ignored
        ("expose-ro=/\nignore=/tmp/x\n", False, False),
        ("expose-ro=/usr\n", False, False),  # a link may lead out of /usr
        ("", False, False),
    ],
)
def test_reads_are_free_only_when_no_row_could_refuse(
    tmp_path: Path, rules: str, recording: bool, free: bool
) -> None:
    assert files.reads_are_free(_table(tmp_path, rules), recording) is free


def test_no_free_reads_for_windows_paths(tmp_path: Path) -> None:
    assert not files.reads_are_free(_table(tmp_path, "expose-ro=/\n", "windows"), False)


def _world(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "project"
    (project / "a" / "b" / "c" / "d" / "e").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s\n")
    return project, outside


RULES = "expose-ro=/\nexpose-rw=.\npython-api=ALLOW:*\npython-import=*\n"


def test_free_reads_keep_every_refusal(tmp_path: Path) -> None:
    """Under ``expose-ro=/`` (threads granted: no decision cache) the reads pass, through a
    link out of the writable directory too; a write through the same link and a relative path are
    judged as before. Control: the same writes without the guard succeed (``test_control``)."""

    project, outside = _world(tmp_path)
    code = f"""
import os
deep = os.path.join(os.getcwd(), "a", "b", "c", "d", "e")
for base in (os.getcwd(), deep):
    os.symlink({str(outside)!r}, os.path.join(base, "out"))
    print("read", open(os.path.join(base, "out", "secret.txt")).read().strip())
    print("list", sorted(os.listdir(os.path.join(base, "out"))))
    try:
        open(os.path.join(base, "out", "secret.txt"), "a")
    except PermissionError as exc:
        print("write", type(exc).__name__)
    try:
        os.mkdir(os.path.join(base, "out", "new"))
    except PermissionError as exc:
        print("mkdir", type(exc).__name__)
print("relative", open(os.path.join("out", "secret.txt")).read().strip())
try:
    open(os.path.join("out", "secret.txt"), "w")
except PermissionError as exc:
    print("relative write", type(exc).__name__)
"""
    result = run_armed(code, RULES, project)
    assert result.returncode == 0, result.stderr
    assert result.lines.count("read s") == 2
    assert result.lines.count("list ['secret.txt']") == 2
    assert result.lines.count("write RulePermissionError") == 2
    assert result.lines.count("mkdir RulePermissionError") == 2
    assert "relative s" in result.lines
    assert "relative write RulePermissionError" in result.lines
    assert not (outside / "new").exists()
    assert (outside / "secret.txt").read_text() == "s\n"


def test_control_the_writes_succeed_unguarded(tmp_path: Path) -> None:
    project, outside = _world(tmp_path)
    os.symlink(outside, project / "out")
    with open(project / "out" / "secret.txt", "a") as f:
        f.write("x")
    os.mkdir(project / "out" / "new")
    assert (outside / "new").is_dir()


def test_audit_still_records_the_resolved_read(tmp_path: Path) -> None:
    project, outside = _world(tmp_path)
    code = f"""
import os
os.symlink({str(outside)!r}, "out")
print(open(os.path.join(os.getcwd(), "out", "secret.txt")).read().strip())
"""
    result = run_armed(code, RULES, project, mode="audit")
    assert result.returncode == 0, result.stderr
    paths = {r.get("path") for r in result.records if r["kind"] == "file" and r["op"] == "read"}
    assert str(outside / "secret.txt") in paths, result.records


def test_symlink_targets_still_judged_when_reads_are_not_free(tmp_path: Path) -> None:
    """Under free reads a link's target is not resolved (every target is exposed); with an
    ``ignore=`` rule reads are not free, and a link to an ignored name is still refused."""

    project, outside = _world(tmp_path)
    (project / ".env").write_text("TOKEN=x\n")
    code = f"""
import os
os.symlink({str(outside)!r}, "out")
print("outside", os.readlink("out") == {str(outside)!r})
try:
    os.symlink(os.path.abspath(".env"), "plain")
except PermissionError as exc:
    print("ignored", type(exc).__name__)
"""
    free = run_armed(code, RULES, project)
    assert free.returncode == 0, free.stderr
    assert "outside True" in free.lines and not any(x.startswith("ignored") for x in free.lines)
    (project / "out").unlink()
    (project / "plain").unlink()
    judged = run_armed(code, RULES + "ignore=.env\n", project)
    assert judged.returncode == 0, judged.stderr
    assert "outside True" in judged.lines
    assert "ignored RulePermissionError" in judged.lines
    assert not (project / "plain").exists()
