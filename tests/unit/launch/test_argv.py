"""Unit tests of the command-line split (CPython 3.11's getopt rules, python-sb's options)."""

from __future__ import annotations

import pytest

from pysandboxes.launch.argv import UsageError, parse


@pytest.mark.parametrize(
    ("words", "options", "kind", "program", "args"),
    [
        (["s.py", "-I", "--x=1"], [], "script", "s.py", ["-I", "--x=1"]),
        (["-Im", "json.tool", "f"], ["-I"], "module", "json.tool", ["f"]),
        (["-mjson.tool"], [], "module", "json.tool", []),
        (["-cprint(1)", "a"], [], "code", "print(1)", ["a"]),
        (["-c", "x", "-m", "y"], [], "code", "x", ["-m", "y"]),
        (
            ["-Werror", "-W", "ignore", "-Xdev", "-X", "utf8", "-"],
            ["-W", "error", "-W", "ignore", "-X", "dev", "-X", "utf8"],
            "stdin",
            None,
            [],
        ),
        (["-", "a"], [], "stdin", None, ["a"]),
        ([], [], "repl", None, []),
        (["-i"], ["-i"], "repl", None, []),
        (["--", "-x.py", "a"], [], "script", "-x.py", ["a"]),
        (["--", "-"], [], "stdin", None, []),
        (["-bbOO", "-u", "s.py"], ["-b", "-b", "-O", "-O", "-u"], "script", "s.py", []),
        (
            ["--check-hash-based-pycs", "never", "s.py"],
            ["--check-hash-based-pycs", "never"],
            "script",
            "s.py",
            [],
        ),
        (["-IWerror", "s.py"], ["-I", "-W", "error"], "script", "s.py", []),
    ],
)
def test_split(
    words: list[str], options: list[str], kind: str, program: str | None, args: list[str]
) -> None:
    cmd = parse(words)
    assert cmd.python_options == options
    assert (cmd.kind, cmd.program, cmd.args) == (kind, program, args)


def test_python_sb_options_and_rules() -> None:
    cmd = parse(
        [
            "-I",
            "--os-sandbox=none",
            "--env=A=b=c",
            "--py-sandbox",
            "--pysandboxes-config",
            "r.rules",
            "--denials=d.jsonl",
            "--learn=out",
            "s.py",
            "--env=not-a-rule",
        ]
    )
    assert cmd.rules == [("os-sandbox", "none"), ("env", "A=b=c"), ("py-sandbox", "")]
    assert cmd.config == "r.rules" and cmd.denials == "d.jsonl" and cmd.learn == "out"
    assert cmd.python_options == ["-I"]
    assert cmd.args == ["--env=not-a-rule"]
    assert parse(["--learn", "-c", "1"]).learn == ""
    assert parse(["--audit", "-c", "1"]).audit
    explain = parse(["--explain", "--json", "-m", "x"])
    assert explain.action == "explain" and explain.json and explain.kind == "module"


def test_flags_x_and_versions() -> None:
    assert parse(["-x", "s.py"]).skip_first_line
    assert parse(["-V", "-c", "1"]).action == "version"
    assert parse(["-VV"]).version_level == 2
    assert parse(["-h", "-Z"]).action == "help"  # -h acts at once, as in CPython
    assert parse(["--help-env"]).action == "help-env"


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["-Z"], "Unknown option: -Z"),
        (["-c"], "Argument expected for the -c option"),
        (["-Ic"], "Argument expected for the -c option"),
        (["-X"], "Argument expected for the -X option"),
        (["-J"], "-J is reserved for Jython"),
        (["-V", "-Z"], "Unknown option: -Z"),
        (["--check-hash-based-pycs"], "Argument expected for the --check-hash-based-pycs options"),
        (["--check-hash-based-pycs", "x"], "must be one of 'default', 'always', or 'never'"),
        (["--pysandboxes-config"], "Argument expected for the --pysandboxes-config option"),
        (["--pysandboxes-config="], "--pysandboxes-config needs a file name"),
        (["--explain=1"], "option --explain takes no value"),
        (["--json", "-c", "1"], "--json goes with --explain"),
        (["--=x"], "unknown option --=x"),
    ],
)
def test_errors(words: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=None) as info:
        parse(words)
    assert message in str(info.value)
