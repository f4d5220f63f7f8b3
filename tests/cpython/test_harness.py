"""The comparison harness itself: JUnit parsing, comparison, the reviewed list (quick)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cpython import harness

JUNIT = """<testsuites><testsuite>
<testcase name="json" status="run" result="completed" />
<testcase name="json" status="run" result="completed"><failure message="x">boom</failure></testcase>
<testcase name="t.A.test_ok" status="run" result="completed" />
<testcase name="t.A.test_skip" status="run" result="completed"><skipped>no</skipped></testcase>
<testcase name="t.A.test_err" status="run" result="completed"><error>bad</error></testcase>
<testcase />
</testsuite></testsuites>
"""


def _run(tmp_path: Path, text: str, name: str) -> harness.Run:
    path = tmp_path / name
    path.write_text(text)
    return harness.Run(harness.outcomes(path), harness.messages(path), 0, "")


def test_outcomes_keep_every_case_of_a_repeated_name(tmp_path: Path) -> None:
    run = _run(tmp_path, JUNIT, "a.xml")
    assert run.outcomes == {
        "json": ["failed", "passed"],
        "t.A.test_ok": ["passed"],
        "t.A.test_skip": ["skipped"],
        "t.A.test_err": ["error"],
    }
    assert run.messages["t.A.test_err"] == "bad"


def test_compare_finds_changed_and_missing_tests(tmp_path: Path) -> None:
    plain = _run(tmp_path, JUNIT, "a.xml")
    changed = JUNIT.replace("<error>bad</error>", "").replace(
        '<testcase name="t.A.test_ok" status="run" result="completed" />', ""
    )
    sandboxed = _run(tmp_path, changed, "b.xml")
    found = {d.test: (d.plain, d.sandboxed) for d in harness.compare(plain, sandboxed)}
    assert found == {
        "t.A.test_err": (("error",), ("passed",)),
        "t.A.test_ok": (("passed",), ()),
    }
    assert harness.compare(plain, plain) == []


def test_known_lines_match_by_test_provider_and_version(tmp_path: Path) -> None:
    path = tmp_path / "known.txt"
    path.write_text(
        "# comment\n\n"
        "t.A.test_err | bwrap,unshare | * | a rule requires it\n"
        "t.B.* | * | 3.13 | another reason\n"
    )
    first, second = harness.load_known(path)
    assert first.matches("t.A.test_err", "bwrap", "3.11")
    assert not first.matches("t.A.test_err", "subprocess", "3.11")
    assert second.matches("t.B.test_x", "landlock", "3.13")
    assert not second.matches("t.B.test_x", "landlock", "3.12")
    assert not second.matches("t.C.test_x", "landlock", "3.13")


@pytest.mark.parametrize("line", ["t.A.test | * | *", "t.A.test | * | * |  ", " | * | * | why"])
def test_a_known_line_without_a_reason_is_an_error(tmp_path: Path, line: str) -> None:
    path = tmp_path / "known.txt"
    path.write_text(line + "\n")
    with pytest.raises(ValueError, match=r"known\.txt\(1\)"):
        harness.load_known(path)


def test_the_reviewed_list_reads() -> None:
    assert isinstance(harness.load_known(), list)


def test_the_permissive_rules_parse(tmp_path: Path) -> None:
    from pysandboxes.policy import parse_text

    policy = parse_text(harness.permissive_rules("bwrap", tmp_path), str(tmp_path / "r"))
    assert policy.os_sandbox.value == "bwrap"


def test_not_run_lines_match_no_difference(tmp_path: Path) -> None:
    path = tmp_path / "known.txt"
    path.write_text("t.Hang.* | not-run | * | hangs with plain python here\n")
    (line,) = harness.load_known(path)
    assert line.not_run
    assert not line.matches("t.Hang.test_x", "subprocess", "3.11")
