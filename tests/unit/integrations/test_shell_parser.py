"""The shell parser of the hook: the tree it builds, and what it refuses to read."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysandboxes.integrations.check import Checker
from pysandboxes.integrations.shell import Node, ShellSyntaxError, parse


def simple_commands(node: Node) -> list[list[str]]:
    """The words (as written) of every simple command, nested substitutions included."""

    found: list[list[str]] = []
    if node.kind == "simple":
        if node.words:
            found.append([w.raw for w in node.words])
        for word in node.words:
            for sub in word.nested:
                found.extend(simple_commands(sub))
        for _name, value in node.assigns:
            for sub in value.nested:
                found.extend(simple_commands(sub))
    for word in node.words if node.kind != "simple" else []:
        for sub in word.nested:
            found.extend(simple_commands(sub))
    for child in node.children:
        found.extend(simple_commands(child))
    for redirect in node.redirects:
        for sub in redirect.body_nested:
            found.extend(simple_commands(sub))
    return found


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a; b & c\nd", [["a"], ["b"], ["c"], ["d"]]),
        ("a && b || c | d", [["a"], ["b"], ["c"], ["d"]]),
        ("{ a; } && ( b )", [["a"], ["b"]]),
        ("if a; then b; elif c; then d; else e; fi", [["a"], ["b"], ["c"], ["d"], ["e"]]),
        ('for x in 1 2; do a "$x"; done', [["a", '"$x"']]),
        ("while a; do b; done; until c; do d; done", [["a"], ["b"], ["c"], ["d"]]),
        ("case x in a|b) c;; *) d;; esac", [["c"], ["d"]]),
        ("f() { a; }; function g { b; }", [["a"], ["b"]]),
        (
            'echo $(a `b`) <(c) "$(d)"',
            [["echo", "$(a `b`)", "<(c)", '"$(d)"'], ["a", "`b`"], ["b"], ["c"], ["d"]],
        ),
        ("x=$(a) y=1", [["a"]]),
        ("cat <<'EOF'\n$(not a command)\nEOF", [["cat"]]),
        ("cat <<EOF\n$(a)\nEOF\nb", [["cat"], ["a"], ["b"]]),
        ("cat <<-EOF\n\t$(a)\n\tEOF", [["cat"], ["a"]]),
        ("echo ${x:-$(a)}", [["echo", "${x:-$(a)}"], ["a"]]),
        ("[[ -n $(a) ]]", [["a"]]),
        ("a \\\n  b # comment $(c)", [["a", "b"]]),
    ],
)
def test_tree(text: str, expected: list[list[str]]) -> None:
    assert simple_commands(parse(text)) == expected


def test_quoting_and_literals() -> None:
    [command] = parse("'py'\"th\"o\\n $'\\x33' a\\ b").children
    assert [w.literal() for w in command.words] == ["python", "3", "a b"]
    [command] = parse("$X ${Y} ~/z").children
    assert [w.literal() for w in command.words] == [None, None, None]


def test_heredoc_bodies_are_data() -> None:
    tree = parse("cat > f <<'EOF'\npython x.py\nEOF\necho next")
    [cat, echo] = tree.children
    assert cat.redirects[1].body == "python x.py\n"
    assert cat.redirects[1].quoted
    assert [w.raw for w in echo.words] == ["echo", "next"]


@pytest.mark.parametrize(
    "text",
    [
        'echo "abc',
        "echo 'abc",
        "echo $(a",
        "echo `a",
        "if a; then b",
        "for x in a; do b",
        "case x in a) b;;",
        "a && ",
        "| a",
        "fi",
        "( a",
        "{ a; ",
        "a )",
        "cat <<$X\nx\n$X",
    ],
)
def test_syntax_errors(text: str) -> None:
    with pytest.raises(ShellSyntaxError):
        parse(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab $`'\"\\(){};&|<>\n#=~*[]!0-9x")), max_size=40))
def test_any_text_parses_or_is_refused_cleanly(text: str) -> None:
    """No input crashes the parser or the checker: it is read, or it is a ShellSyntaxError
    (which the checker turns into an "unparsable" refusal)."""

    with contextlib.suppress(ShellSyntaxError):
        parse(text)
    Checker(cwd="/nonexistent-dir").check(text)
