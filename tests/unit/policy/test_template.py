"""The template of a new rule file parses back and has what issue 2 part 4 asks."""

from __future__ import annotations

from pathlib import Path

import pytest

from pysandboxes.policy import parse_text
from pysandboxes.policy.template import (
    LEARNED_BEGIN,
    LEARNED_END,
    TEMPLATE_SECTIONS,
    render_template,
)


def test_template_parses_back(tmp_path: Path) -> None:
    text = render_template(default_provider="landlock")
    policy = parse_text(text, str(tmp_path / ".py-sandboxes"), environ={"HOME": "/nonexistent"})
    assert policy.os_sandbox.value == "landlock" and policy.py_sandbox.value is True
    assert [(i.written, i.status) for i in policy.includes] == [
        ("~/.config/py-sandboxes/user-py-sandboxes.profile", "missing"),
        ("/etc/py-sandboxes/global-py-sandboxes.profile", "missing"),
    ]
    assert not policy.locked and policy.warnings == ()
    assert "os-sandbox=${OS_SANDBOX:-landlock}\n" in text
    assert '\n# include "./.local.py-sandboxes"\n' in text
    assert "\n# learn=false\n" in text
    # the OS_SANDBOX variable changes the provider for one run
    downgraded = parse_text(text, str(tmp_path / "x"), environ={"OS_SANDBOX": "none"})
    assert downgraded.os_sandbox.value == "none"


def test_subprocess_default() -> None:
    text = render_template(default_provider="subprocess")
    assert "os-sandbox=${OS_SANDBOX:-subprocess}\n" in text


def test_learned_sections_are_marked_and_parse_as_learned(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    learned = {
        "files": [f"expose-ro={tmp_path / 'data'}", f"expose-ro={tmp_path / 'gone'}"],
        "network": ["net=ALLOW|TCP|api.example.com|443|OUT"],
        "imports": ["# standard library", "python-import=json, csv"],
        "environment": ["env=TOKEN=${TOKEN}"],
        "api": ["python-api=ALLOW:os.system  # process-exec"],
        "eval": ["eval-syntax=arith"],
    }
    text = render_template(default_provider="landlock", learned_sections=learned)
    assert text.count(LEARNED_BEGIN) == len(TEMPLATE_SECTIONS)
    assert text.count(LEARNED_END) == len(TEMPLATE_SECTIONS)
    for name in TEMPLATE_SECTIONS:
        assert f"{LEARNED_BEGIN}: {name} ---\n" in text
    policy = parse_text(text, str(tmp_path / ".py-sandboxes"), environ={})
    learned_lines = [line for line in policy.lines if line.origin.learned]
    assert {line.key for line in learned_lines} == {
        "expose-ro",
        "net",
        "python-import",
        "env",
        "python-api",
        "eval-syntax",
    }
    assert [line.key for line in policy.lines if not line.origin.learned] == [
        "py-sandbox",
        "os-sandbox",
    ]
    # a learned path that is gone is a warning, not an error
    assert [r.path for r in policy.expose_ro] == [str(tmp_path / "data")]
    assert len(policy.warnings) == 1 and "gone" in policy.warnings[0]


def test_sections_are_in_order_and_each_explained() -> None:
    text = render_template(default_provider="landlock")
    positions = [text.index(f"{LEARNED_BEGIN}: {name} ---") for name in TEMPLATE_SECTIONS]
    assert positions == sorted(positions)
    assert TEMPLATE_SECTIONS == ("files", "network", "imports", "environment", "api", "eval")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"learned_sections": {"paths": ["x=y"]}}, "unknown template sections"),
        ({"learned_sections": {"files": ["a\nb"]}}, "a learned line holds a line break"),
        ({"default_provider": "x; rm"}, "bad provider name"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"default_provider": "landlock", **kwargs}
    with pytest.raises(ValueError, match=message):
        render_template(**args)  # type: ignore[arg-type]
