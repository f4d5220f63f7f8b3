"""SPEC §2.6: learn=false locks the configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.policy import check_lock, load_policy
from pysandboxes.policy.model import Policy
from tests.unit.policy.util import load, problems

LOCKED = "os-sandbox=bwrap\nlearn=false\npython-import=json\n"


def test_learn_false_locks(tmp_path: Path) -> None:
    policy = load(tmp_path, LOCKED)
    assert policy.locked and str(policy.lock) == ".py-sandboxes(2)"
    assert policy.learn.value is None
    check_lock(policy, learning_requested=False, rule_file_missing=False)


def test_lock_in_an_included_profile(tmp_path: Path) -> None:
    (tmp_path / "home" / "p").write_text("learn=false\n")
    policy = load(tmp_path, 'include "~/p"\nlearn=FALSE\n')
    assert str(policy.lock) == "home/p(1)"  # the first in load order; repeats are fine


def test_command_line_rules_are_refused_under_the_lock(tmp_path: Path) -> None:
    found = problems(
        tmp_path, LOCKED, cli=[("os-sandbox", "none"), ("expose-ro", "/etc"), ("learn", "")]
    )
    reason = "the configuration is locked by learn=false at .py-sandboxes(2)"
    assert found == [
        f"<arg>: rule 'os-sandbox=none' refused: {reason}",
        f"<arg>: rule 'expose-ro=/etc' refused: {reason}",
        f"<arg>: rule 'learn=' refused: {reason}",
    ]


def test_learn_file_line_is_refused_under_the_lock(tmp_path: Path) -> None:
    (tmp_path / "home" / "p").write_text("learn=false\n")
    found = problems(tmp_path, 'learn=out.rules\ninclude "~/p"\n')
    assert found == [
        ".py-sandboxes(1): learn=out.rules (learning) refused: the configuration is locked by "
        "learn=false at home/p(1)"
    ]


def test_check_lock_refuses_learning_and_a_missing_file(tmp_path: Path) -> None:
    policy = load(tmp_path, LOCKED)
    with pytest.raises(ConfigError) as info:
        check_lock(policy, learning_requested=True, rule_file_missing=True)
    assert [str(p) for p in info.value.problems] == [
        ".py-sandboxes: the rule file is missing: the configuration is locked by learn=false "
        "at .py-sandboxes(2)",
        "<arg>: learning mode refused: the configuration is locked by learn=false at "
        ".py-sandboxes(2)",
    ]


def test_unlocked_policy_passes_check_lock() -> None:
    check_lock(Policy(), learning_requested=True, rule_file_missing=True)


def test_learn_false_on_the_command_line_locks_nothing_else(tmp_path: Path) -> None:
    policy = load_policy(
        None, cli_rules=[("learn", "false"), ("python-import", "json")], environ={}, cwd="/"
    )
    assert policy.locked and str(policy.lock) == "<arg>"
    assert [r.name for r in policy.python_import] == ["json"]
    with pytest.raises(ConfigError, match="learning mode refused"):
        check_lock(policy, learning_requested=True, rule_file_missing=False)


def test_lock_survives_json(tmp_path: Path) -> None:
    policy = load(tmp_path, LOCKED)
    assert Policy.from_json(policy.to_json()).lock == policy.lock
