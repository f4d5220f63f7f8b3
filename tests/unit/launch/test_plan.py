"""Decisions of the launcher before anything runs: the mode, and refusals without learning."""

from __future__ import annotations

from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.launch.argv import parse
from pysandboxes.launch.cli import RunPlan, plan_run
from pysandboxes.launch.start import refuse_without_learning
from pysandboxes.policy.model import Policy


def test_missing_rule_file_without_learning_names_the_file(tmp_path: Path) -> None:
    rule_file = str(tmp_path / ".py-sandboxes")
    plan = RunPlan(parse(["-c", "1"]), str(tmp_path), Policy(), rule_file, False, "learn", None)
    with pytest.raises(ConfigError) as info:
        refuse_without_learning(plan)
    assert info.value.problems[0].where == rule_file
    assert "no rule file here" in str(info.value)


@pytest.mark.parametrize(
    ("words", "text", "mode"),
    [
        (["-c", "1"], "py-sandbox=false\n", "enforce"),
        (["--learn", "-c", "1"], "py-sandbox=false\n", "learn"),
        (["--learn=out.rules", "-c", "1"], "py-sandbox=false\n", "learn"),
        (["--audit", "-c", "1"], "py-sandbox=false\n", "audit"),
        (["-c", "1"], None, "learn"),  # no rule file: learning
    ],
)
def test_modes(tmp_path: Path, words: list[str], text: str | None, mode: str) -> None:
    if text is not None:
        (tmp_path / ".py-sandboxes").write_text(text)
    plan = plan_run(parse(words), str(tmp_path))
    assert plan.mode == mode
    assert plan.provider_name == "subprocess"  # the default, and always in learn/audit
    if "--learn=out.rules" in words:
        assert plan.learn_output == str(tmp_path / "out.rules")
    elif mode == "learn":
        assert plan.learn_output == str(tmp_path / ".py-sandboxes")


def test_learning_ignores_the_kernel_provider(tmp_path: Path) -> None:
    (tmp_path / ".py-sandboxes").write_text("os-sandbox=bwrap\n")
    assert plan_run(parse(["-c", "1"]), str(tmp_path)).provider_name == "bwrap"
    assert plan_run(parse(["--audit", "-c", "1"]), str(tmp_path)).provider_name == "subprocess"


def test_rule_file_that_is_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".py-sandboxes").mkdir()
    with pytest.raises(ConfigError, match="not a regular file"):
        plan_run(parse(["-c", "1"]), str(tmp_path))
    with pytest.raises(ConfigError, match="not a regular file"):
        plan_run(parse([f"--pysandboxes-config={tmp_path}", "-c", "1"]), str(tmp_path))
