"""SPEC §2.3: include resolution with real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from pysandboxes.policy import load_policy
from tests.unit.policy.util import load, one_problem


def _names(policy: object) -> list[str]:
    return [r.name for r in policy.python_import]  # type: ignore[attr-defined]


def test_bare_name_is_next_to_the_including_file(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    (skill / "sub").mkdir(parents=True)
    (skill / "common").write_text("python-import=common_mod\n")
    (skill / "sub" / "more").write_text("python-import=more_mod\n")
    (tmp_path / "common").write_text("python-import=WRONG\n")  # in the cwd: not used
    policy = load(tmp_path, 'include "common"\ninclude "sub/more"\n', name="skill/.py-sandboxes")
    assert _names(policy) == ["common_mod", "more_mod"]
    assert [(i.written, i.resolved, i.status) for i in policy.includes] == [
        ("common", str(skill / "common"), "loaded"),
        ("sub/more", str(skill / "sub" / "more"), "loaded"),
    ]
    assert policy.python_import[0].origin.file == str(skill / "common")
    assert str(policy.python_import[0].origin) == "skill/common(1)"


def test_dot_paths_are_from_the_current_directory(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / ".local.py-sandboxes").write_text("python-import=WRONG\n")
    (tmp_path / ".local.py-sandboxes").write_text("python-import=local_mod\n")
    (tmp_path.parent / f"{tmp_path.name}-up").write_text("python-import=up_mod\n")
    text = f'include "./.local.py-sandboxes"\ninclude "../{tmp_path.name}-up"\n'
    policy = load(tmp_path, text, name="skill/.py-sandboxes")
    assert _names(policy) == ["local_mod", "up_mod"]


def test_home_absolute_and_variables(tmp_path: Path) -> None:
    (tmp_path / "home" / ".config").mkdir()
    (tmp_path / "home" / ".config" / "u").write_text("python-import=user_mod\n")
    (tmp_path / "abs").write_text("python-import=abs_mod\n")
    (tmp_path / "var").write_text("python-import=var_mod\n")
    text = f'include "~/.config/u"\ninclude "{tmp_path}/abs"\ninclude "${{DIR}}/var"  # c\n'
    policy = load(tmp_path, text, env={"DIR": str(tmp_path)})
    assert _names(policy) == ["user_mod", "abs_mod", "var_mod"]


def test_missing_include_is_skipped_and_recorded(tmp_path: Path) -> None:
    policy = load(tmp_path, 'include "~/nothing"\ninclude "/no/such/dir/x"\npython-import=a\n')
    assert _names(policy) == ["a"]
    assert [i.status for i in policy.includes] == ["missing", "missing"]
    assert policy.includes[0].resolved == str(tmp_path / "home" / "nothing")
    assert policy.rule_files == (str(tmp_path / ".py-sandboxes"),)


def test_include_that_cannot_be_opened_is_an_error(tmp_path: Path) -> None:
    # A symlink loop fails with ELOOP, not "missing": refused, like a file without read right
    # (chmod 0 cannot be used here: these tests run as root, who reads every file).
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    found = one_problem(tmp_path, 'include "loop"\n')
    assert "cannot read included file" in found and "Too many levels of symbolic links" in found


def test_unreadable_include_is_an_error(tmp_path: Path) -> None:
    # A directory cannot be read as a file, for root too (chmod 0 does not stop root).
    (tmp_path / "adir").mkdir()
    found = one_problem(tmp_path, '# x\ninclude "adir"\n')
    assert found == (
        f".py-sandboxes(2): cannot read included file {tmp_path / 'adir'}: Is a directory (an "
        "unreadable include is refused: skipping it could drop rules such as a lock)"
    )
    (tmp_path / "bin").write_bytes(b"\xff\xfe")
    assert "not UTF-8 text (line 1)" in one_problem(tmp_path, 'include "bin"\n')


def test_cycles_are_cut_and_a_file_is_loaded_once(tmp_path: Path) -> None:
    (tmp_path / "a").write_text('python-import=a\ninclude "b"\ninclude ".py-sandboxes"\n')
    (tmp_path / "b").write_text('python-import=b\ninclude "a"\n')
    (tmp_path / "b-link").symlink_to(tmp_path / "b")
    policy = load(tmp_path, 'python-import=main\ninclude "a"\ninclude "b-link"\ninclude "a"\n')
    assert _names(policy) == ["main", "a", "b"]
    assert [(i.written, i.status) for i in policy.includes] == [
        ("a", "loaded"),
        ("b", "loaded"),
        ("a", "cycle"),
        (".py-sandboxes", "cycle"),
        ("b-link", "cycle"),
        ("a", "cycle"),
    ]
    assert policy.rule_files == tuple(str(tmp_path / n) for n in (".py-sandboxes", "a", "b"))


def test_rules_of_includes_come_at_the_include_point(tmp_path: Path) -> None:
    (tmp_path / "inc").write_text("python-import=b\n")
    policy = load(tmp_path, 'python-import=a\ninclude "inc"\npython-import=c\n')
    assert [(line.value, str(line.origin)) for line in policy.lines] == [
        ("a", ".py-sandboxes(1)"),
        ("b", "inc(1)"),
        ("c", ".py-sandboxes(3)"),
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("include common", 'include takes a path in double quotes: include "PATH"'),
        ("include 'common'", "include takes a path in double quotes"),
        ('include "common', 'unterminated " quote in include'),
        ('include "a" "b"', 'unexpected text after include "PATH": \'"b"\''),
        ('include ""', "include of an empty path"),
        ('include "${NOPE}"', "include of an empty path"),
        ('include "$X"', "'$X...' is not a variable"),
    ],
)
def test_include_syntax_errors(tmp_path: Path, line: str, message: str) -> None:
    found = one_problem(tmp_path, line + "\n")
    assert found.startswith(".py-sandboxes(1): ") and message in found, found


def test_problems_in_included_files_name_their_file(tmp_path: Path) -> None:
    (tmp_path / "home" / "p").write_text("# profile\nnet=DENY|*|10.0.0.0/88|*|OUT\n")
    found = one_problem(tmp_path, 'include "~/p"\n')
    assert found.startswith("home/p(2): bad HOST '10.0.0.0/88'")


def test_parse_text_reads_includes_from_disk(tmp_path: Path) -> None:
    from pysandboxes.policy import parse_text

    (tmp_path / "inc").write_text("python-import=x\n")
    policy = parse_text('include "inc"\n', str(tmp_path / "virtual"), environ={}, cwd="/")
    assert _names(policy) == ["x"]


def test_include_of_relative_path_with_cwd_argument(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "local").write_text("python-import=from_cwd\n")
    (tmp_path / "main").write_text('include "./local"\n')
    policy = load_policy(str(tmp_path / "main"), environ={}, cwd=str(other))
    assert _names(policy) == ["from_cwd"]


def test_fifo_and_device_includes_are_refused_without_blocking(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "fifo")
    found = one_problem(tmp_path, 'include "fifo"\n')
    assert "cannot read included file" in found and "not a regular file" in found
    found = one_problem(tmp_path, 'include "/dev/zero"\n')
    assert "not a regular file" in found
