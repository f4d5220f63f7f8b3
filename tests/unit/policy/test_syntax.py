"""SPEC §2.1: lines, comments, quotes, variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from pysandboxes.policy.syntax import LineSyntaxError, Var, expand, scan_value, split_line
from tests.unit.policy.util import load, one_problem, problems


def test_blank_lines_comments_and_surrounding_blanks_are_ignored(tmp_path: Path) -> None:
    policy = load(tmp_path, "\n   \n# a comment\n   python-import=json   \n\t# indented\n")
    assert [r.name for r in policy.python_import] == ["json"]
    assert policy.python_import[0].origin.line == 4


def test_trailing_comment_is_dropped(tmp_path: Path) -> None:
    policy = load(tmp_path, "net=ALLOW|TCP|0.0.0.0/32|8000|IN  # The MCP endpoint\n")
    assert policy.net[0].text == "net=ALLOW|TCP|0.0.0.0/32|8000|IN"


def test_hash_inside_quotes_is_literal_and_quotes_are_removed(tmp_path: Path) -> None:
    policy = load(tmp_path, "env=GREETING=\"hello # world\"  # comment\nenv=LIT='a#b'\n")
    values = {r.name: r.template for r in policy.env}
    # env templates keep their quotes; the environment builder removes them
    assert values == {"GREETING": '"hello # world"', "LIT": "'a#b'"}
    from pysandboxes.policy.decide import build_environment

    assert build_environment(policy, {}) == {"GREETING": "hello # world", "LIT": "a#b"}


def test_quoted_path_value(tmp_path: Path) -> None:
    (tmp_path / "my dir#1").mkdir()
    policy = load(tmp_path, 'expose-ro="./my dir#1"\n')
    assert policy.expose_ro[0].path == str(tmp_path / "my dir#1")


def test_variables_expand_from_the_environment(tmp_path: Path) -> None:
    policy = load(
        tmp_path,
        "os-sandbox=${OS_SANDBOX:-landlock}\npython-import=${MOD}\n",
        env={"MOD": "json"},
    )
    assert policy.os_sandbox.value == "landlock"
    assert policy.python_import[0].name == "json"
    policy = load(tmp_path, "os-sandbox=${OS_SANDBOX:-landlock}\n", env={"OS_SANDBOX": "bwrap"})
    assert policy.os_sandbox.value == "bwrap"
    # an empty variable takes its default too (as ${X:-d} in a shell)
    policy = load(tmp_path, "os-sandbox=${OS_SANDBOX:-landlock}\n", env={"OS_SANDBOX": ""})
    assert policy.os_sandbox.value == "landlock"


def test_nested_defaults(tmp_path: Path) -> None:
    text = "os-sandbox=${A:-${B:-${C:-none}}}\n"
    assert load(tmp_path, text).os_sandbox.value == "none"
    assert load(tmp_path, text, env={"B": "bwrap"}).os_sandbox.value == "bwrap"
    assert load(tmp_path, text, env={"A": "qemu", "B": "bwrap"}).os_sandbox.value == "qemu"


def test_unset_variable_without_default_is_empty(tmp_path: Path) -> None:
    policy = load(tmp_path, "python-import=json${NOPE}\n")
    assert policy.python_import[0].name == "json"


def test_single_quotes_make_dollar_literal_double_quotes_do_not() -> None:
    parts, _ = scan_value("'${X}'\"${X}\"")
    assert parts == ("${X}", Var("X"))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("python-import=$HOME", "'$H...' is not a variable"),
        ("python-import=$(id)", "'$(...' is not a variable"),
        ("python-import=a$", "'$...' is not a variable"),
        ("python-import=${}", "'${}' is not a valid variable name"),
        ("python-import=${1X}", "'${1X' is not a valid variable name"),
        ("python-import=${X-d}", "must be followed by '}' or ':-default}'"),
        ("python-import=${X:=d}", "must be followed by '}' or ':-default}'"),
        ("python-import=${X", "must be followed by '}'"),
        ("python-import=${X:-abc", "unterminated '${'"),
        ("python-import=${X:-a#b}", "unterminated '${'"),
        ("python-import=${P_*}", "'${P_*' is not a valid variable name"),
        ('python-import="json', 'unterminated " quote'),
        ('python-import="$X"', "'$X...' is not a variable"),
        ('python-import="${X"', "must be followed by '}'"),
        ("python-import='json", "unterminated ' quote"),
    ],
)
def test_dollar_and_quote_errors(tmp_path: Path, line: str, message: str) -> None:
    found = one_problem(tmp_path, f"# first\n{line}\n")
    assert found.startswith(".py-sandboxes(2): ")
    assert message in found


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("just words", "not a rule: expected key=value"),
        ("net = ALLOW|*|*|*|OUT", "no spaces are allowed around the first '='"),
        ("net= ALLOW|*|*|*|OUT", "no spaces are allowed around the first '='"),
        ("net =ALLOW|*|*|*|OUT", "no spaces are allowed around the first '='"),
        ("Net=ALLOW|*|*|*|OUT", "'Net' is not a key"),
        ("=value", "not a rule"),
        ("include", "not a rule"),
        ("includes=x", "unknown key 'includes'"),
    ],
)
def test_line_errors(tmp_path: Path, line: str, message: str) -> None:
    found = one_problem(tmp_path, line + "\n")
    assert found.startswith(".py-sandboxes(1): ")
    assert message in found


def test_all_problems_reported_together_sorted(tmp_path: Path) -> None:
    (tmp_path / "b").write_text("bogus\n\nnet=X\n")
    text = 'python-import=1x\ninclude "b"\nos-sandbox=nope\nwhat\n'
    found = problems(tmp_path, text)
    assert [line.split(":")[0] for line in found] == [
        ".py-sandboxes(1)",
        ".py-sandboxes(3)",
        ".py-sandboxes(4)",
        "b(1)",
        "b(3)",
    ]
    assert all("\n" not in line for line in found)


def test_split_line_shapes() -> None:
    assert split_line("   ") is None
    assert split_line("# x") is None
    assert split_line('include "x"') == ("include", '"x"')
    assert split_line("a=b=c") == ("a", "b=c")
    with pytest.raises(LineSyntaxError):
        split_line("key")


def test_expand_uses_lookup_and_defaults() -> None:
    parts, _ = scan_value("a${X:-b${Y}}c")
    assert expand(parts, {"Y": "y"}.get) == "abyc"
    assert expand(parts, {"X": "x"}.get) == "axc"


def test_utf8_bom_and_crlf_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / ".py-sandboxes"
    path.write_bytes(b"\xef\xbb\xbfpython-import=json\r\npython-import=csv\r\n")
    from pysandboxes.policy import load_policy

    policy = load_policy(str(path), environ={}, cwd=str(tmp_path))
    assert [r.name for r in policy.python_import] == ["json", "csv"]


def test_not_utf8_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / ".py-sandboxes"
    path.write_bytes(b"# ok\npython-import=\xff\n")
    from pysandboxes.errors import ConfigError
    from pysandboxes.policy import load_policy

    with pytest.raises(ConfigError) as info:
        load_policy(str(path), environ={}, cwd=str(tmp_path))
    assert str(info.value) == ".py-sandboxes(2): the rule file is not UTF-8 text"


def test_line_numbers_count_newlines_only(tmp_path: Path) -> None:
    # \x85, \u2028 and form feeds are not line ends: the numbers match an editor's
    found = problems(tmp_path, "env=A=x\u2028y\nenv=B=\x85\nbogus\n")
    assert found == [
        '.py-sandboxes(3): not a rule: expected key=value, include "PATH", a # '
        "comment or an empty line"
    ]
