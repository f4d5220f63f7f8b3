"""The record of the variables a rule file reads (``policy.loader.variables_read``).

The coding-agent hook refuses a command that sets one of them (``OS_SANDBOX=none python-sb``
under ``os-sandbox=${OS_SANDBOX:-landlock}``), and ``--explain`` shows the same record.
"""

from __future__ import annotations

from pathlib import Path

from pysandboxes.launch.argv import SUBCOMMANDS, subcommand_of
from pysandboxes.policy.loader import variables_read


def test_every_kind_of_reference_is_recorded(tmp_path: Path) -> None:
    (tmp_path / "common").write_text("expose-ro=${SHARED_DIR:-/usr}\n")
    (tmp_path / ".py-sandboxes").write_text(
        "learn=false\n"
        "os-sandbox=${OS_SANDBOX:-landlock}\n"
        "expose-ro=${A:-${B:-/}}\n"
        "expose-rw=~\n"
        "env=TOKEN=${API_TOKEN}\n"
        "env=PAT_*=${PAT_*}\n"
        'include "common"\n'
        "py-sandbox=true\n"
    )
    found = variables_read(str(tmp_path / ".py-sandboxes"), environ={}, cwd=str(tmp_path))
    assert set(found) == {"OS_SANDBOX", "A", "B", "HOME", "API_TOKEN", "PAT_*", "SHARED_DIR"}
    assert found["OS_SANDBOX"].endswith(".py-sandboxes(2)")
    assert found["SHARED_DIR"].endswith("common(1)")


def test_a_file_whose_rules_are_refused_still_gives_its_record(tmp_path: Path) -> None:
    rules = tmp_path / ".py-sandboxes"
    rules.write_text("os-sandbox=${OS_SANDBOX}\nfrobnicate=1\n")  # unknown key, empty provider
    assert set(variables_read(str(rules), environ={}, cwd=str(tmp_path))) == {"OS_SANDBOX"}


def test_a_file_without_variables_reads_none(tmp_path: Path) -> None:
    rules = tmp_path / ".py-sandboxes"
    rules.write_text("learn=false\nexpose-ro=/usr\n")
    assert variables_read(str(rules), environ={}, cwd=str(tmp_path)) == {}
    assert variables_read(str(tmp_path / "missing"), environ={}, cwd=str(tmp_path)) == {}


def test_the_parser_names_the_sub_commands() -> None:
    """The hook reads sub-commands with the launcher's own function (launch/argv.py)."""

    assert subcommand_of(["--review", "a", "b"]) == "--review"
    assert subcommand_of(["--hook=claude-code"]) == "--hook"
    assert subcommand_of(["--explain", "x.py"]) is None  # a run's arguments
    assert subcommand_of(["x.py", "--review"]) is None
    assert subcommand_of([]) is None
    assert "--install-hook" in SUBCOMMANDS
