"""Writing learned rules into an existing rule file: byte-for-byte keep, dated block, backup,
atomic replace."""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pysandboxes.learn import writer
from pysandboxes.learn.generalize import Learned

WHEN = datetime(2026, 11, 29, 16, 5, 7, tzinfo=UTC)


def sample() -> Learned:
    learned = Learned()
    learned.add("files", "expose-ro", "./data")
    learned.note("imports", "Standard library.")
    learned.add("imports", "python-import", "csv, json")
    learned.add("api", "python-api", "ALLOW:os.system", "process-exec")
    return learned


REVIEWED = (
    "# Reviewed by Ann on 2026-11-01: keep the comments!\n"
    "py-sandbox=true\n"
    "os-sandbox=subprocess   # pinned\n"
    "\n"
    "expose-ro=./data  # the input\n"
)


def test_merge_keeps_every_byte_and_adds_a_dated_block() -> None:
    merged = writer.merge_text(REVIEWED, sample(), WHEN, source="report.py")
    assert merged.startswith(REVIEWED)
    block = merged[len(REVIEWED) :]
    begin, end = writer._markers()
    assert block.splitlines() == [
        "",
        f"{begin} 2026-11-29 16:05 UTC ---",
        "# Added by python-sb learning mode (report.py).",
        "# It grants what the program did in that run: review before relying on it.",
        "# Files and directories",
        "expose-ro=./data",
        "# Modules",
        "# Standard library.",
        "python-import=csv, json",
        "# Sensitive calls",
        "python-api=ALLOW:os.system  # process-exec",
        end,
    ]


def test_merge_of_a_file_without_final_newline_or_with_crlf() -> None:
    merged = writer.merge_text("py-sandbox=true", sample(), WHEN)
    assert merged.startswith("py-sandbox=true\n\n")
    crlf = "a=1\r\nb=2\r\n"
    assert writer.merge_text(crlf, sample(), WHEN).startswith(crlf)
    assert writer.merge_text("", sample(), WHEN).startswith(writer._markers()[0])


def test_write_learned_into_an_existing_file(tmp_path: Path) -> None:
    rule_file = tmp_path / ".py-sandboxes"
    rule_file.write_bytes(REVIEWED.encode())
    os.chmod(rule_file, 0o640)
    written, saved = writer.write_learned(str(rule_file), sample(), when=WHEN)
    assert written == str(rule_file.resolve())
    assert saved == f"{rule_file.resolve()}.20261129-160507.bak"
    assert Path(saved).read_bytes() == REVIEWED.encode()
    assert stat.S_IMODE(os.stat(saved).st_mode) == 0o640
    text = rule_file.read_text()
    assert text.startswith(REVIEWED)
    assert "python-import=csv, json" in text
    assert stat.S_IMODE(rule_file.stat().st_mode) == 0o640
    # A second write in the same second keeps the first backup.
    _, again = writer.write_learned(str(rule_file), sample(), when=WHEN)
    assert again == f"{rule_file.resolve()}.20261129-160507-2.bak"
    assert Path(saved).read_bytes() == REVIEWED.encode()
    assert Path(again).read_text() == text
    # No temporary file is left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".py-sandboxes",
        ".py-sandboxes.20261129-160507-2.bak",
        ".py-sandboxes.20261129-160507.bak",
    ]


def test_a_symlinked_rule_file_is_updated_through_the_link(tmp_path: Path) -> None:
    target = tmp_path / "shared.py-sandboxes"
    target.write_text(REVIEWED)
    link = tmp_path / ".py-sandboxes"
    link.symlink_to(target.name)
    writer.write_learned(str(link), sample(), when=WHEN)
    assert link.is_symlink()
    assert "expose-ro=./data" in target.read_text().split(REVIEWED, 1)[1]


def test_a_failed_write_changes_nothing(tmp_path: Path) -> None:
    rule_file = tmp_path / ".py-sandboxes"
    rule_file.write_text(REVIEWED)
    with pytest.raises(UnicodeDecodeError):
        bad = tmp_path / "latin1"
        bad.write_bytes(b"# caf\xe9\n")
        writer.write_learned(str(bad), sample(), when=WHEN)
    assert bad.read_bytes() == b"# caf\xe9\n"
    missing_dir = tmp_path / "nope" / ".py-sandboxes"
    with pytest.raises(OSError):
        writer.atomic_write(str(missing_dir), "x=1\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".py-sandboxes", "latin1"]


def test_atomic_write_never_leaves_a_temporary_file_on_error(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_text("old\n")

    with pytest.raises(TypeError):
        writer.atomic_write(str(target), 12345)  # type: ignore[arg-type]
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


def test_sections_are_the_template_sections() -> None:
    from pysandboxes.learn.generalize import SECTIONS
    from pysandboxes.policy.template import TEMPLATE_SECTIONS

    assert SECTIONS == TEMPLATE_SECTIONS


def test_new_file_is_the_template_with_the_learned_lines_and_parses_back(tmp_path: Path) -> None:
    from pysandboxes.policy import parse_text

    (tmp_path / "data").mkdir()
    rule_file = tmp_path / ".py-sandboxes"
    written, saved = writer.write_learned(str(rule_file), sample(), when=WHEN, provider="landlock")
    assert written == str(rule_file.resolve())
    assert saved is None
    text = rule_file.read_text()
    assert "os-sandbox=${OS_SANDBOX:-landlock}" in text
    assert 'include "~/.config/py-sandboxes/user-py-sandboxes.profile"' in text
    policy = parse_text(text, str(rule_file), environ={"HOME": str(tmp_path)}, cwd=str(tmp_path))
    assert [r.path for r in policy.expose_ro] == [str(tmp_path / "data")]
    assert {r.name for r in policy.python_import} == {"csv", "json"}
    assert [(r.action, r.target) for r in policy.python_api] == [("ALLOW", "os.system")]
    assert all(r.origin.learned for r in policy.expose_ro + policy.python_import)


def test_merged_block_is_learned_for_the_parser_and_old_lines_are_not(tmp_path: Path) -> None:
    from pysandboxes.policy import parse_text

    (tmp_path / "data").mkdir()
    learned = sample()
    learned.add("files", "expose-ro", "./gone-since")  # a learned path that no longer exists
    merged = writer.merge_text(REVIEWED, learned, WHEN)
    policy = parse_text(merged, str(tmp_path / "r"), environ={"HOME": "/x"}, cwd=str(tmp_path))
    old = [r for r in policy.expose_ro if r.origin.line == 5]
    assert old and not old[0].origin.learned
    assert any("gone-since" in w for w in policy.warnings)
    assert all(r.origin.learned for r in policy.python_api)
