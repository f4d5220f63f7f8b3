"""``rules=`` names a rule file: rule text given there instead is an error, never a file.

A missing rule file is learned into, as on the command line; but ``rules="eval-call=..."``
(rule text where a path belongs) used to start a learning run that wrote a rule file named
after that text, with the rules meant nowhere in force.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pysandboxes.partial.api import rule_file_path, sandbox, sandboxes
from pysandboxes.partial.errors import PartialModeError


@pytest.mark.parametrize(
    "text", ["eval-call=__import__", "expose-ro=.\npython-import=json", "sub/net=ALLOW|*|*|*|*"]
)
def test_rule_text_is_refused_and_writes_nothing(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PartialModeError, match="reads as rule text"):
        sandboxes(rules=text)
    with pytest.raises(PartialModeError, match="reads as rule text"):
        sandbox(rules=text)
    assert list(tmp_path.iterdir()) == []


def test_a_path_is_kept_existing_or_not(tmp_path: Path) -> None:
    existing = tmp_path / "tool.py-sandboxes"
    existing.write_text("python-import=json\n")
    assert rule_file_path(str(existing)) == str(existing)
    assert rule_file_path(existing) == str(existing)  # a path object too
    missing = tmp_path / "learned.py-sandboxes"  # learned into, as on the command line
    assert rule_file_path(str(missing)) == str(missing)
    # An existing file whose name holds '=' is a rule file like any other.
    odd = tmp_path / "a=b.py-sandboxes"
    odd.write_text("")
    assert rule_file_path(str(odd)) == str(odd)


def test_not_a_path_is_refused() -> None:
    with pytest.raises(PartialModeError, match="names a rule file"):
        rule_file_path(["python-import=json"])
