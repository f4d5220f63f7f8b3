"""DENY rules by host name hold for the name's addresses (issue 11, point 3):
``policy.netrules.pin_deny_names`` and the one resolution per run."""

from __future__ import annotations

from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.guard.network import build_rules, make_matcher
from pysandboxes.policy import netrules
from tests.unit.policy.util import load

ANSWERS = {"metadata.internal": ["169.254.169.254", "fd00:ec2::254"], "db.example": ["10.1.2.3"]}


def fake_resolve(name: str) -> list[str]:
    if name not in ANSWERS:
        raise OSError(-2, "Name or service not known")
    return ANSWERS[name]


def test_deny_name_adds_its_addresses_with_the_rule_text(tmp_path: Path) -> None:
    policy = load(
        tmp_path,
        "net=ALLOW|*|*|*|OUT\nnet=DENY|TCP|metadata.internal|80,443|OUT\n"
        "net=ALLOW|TCP|db.example|5432|OUT\n",
    )
    pinned = netrules.pin_deny_names(policy, fake_resolve)
    added = pinned.net[len(policy.net) :]
    assert [(r.action, r.proto, r.host, r.ports, r.direction, r.is_name) for r in added] == [
        ("DENY", "TCP", "169.254.169.254", ((80, 80), (443, 443)), "OUT", False),
        ("DENY", "TCP", "fd00:ec2::254", ((80, 80), (443, 443)), "OUT", False),
    ]
    assert {r.text for r in added} == {"net=DENY|TCP|metadata.internal|80,443|OUT"}
    assert {str(r.origin) for r in added} == {".py-sandboxes(2)"}
    # The guard's matcher refuses the hard-coded address, on the denied ports only.
    match = make_matcher(build_rules(pinned))
    key = (4, 0xA9FEA9FE)
    assert match("TCP", (), key, 80, "OUT") == (
        False,
        "net=DENY|TCP|metadata.internal|80,443|OUT",
        ".py-sandboxes(2)",
    )
    assert match("TCP", (), key, 8080, "OUT")[0]
    assert match("UDP", (), key, 80, "OUT")[0]
    # Without the pinning, the same address was allowed by the "*" rule (the bug).
    assert make_matcher(build_rules(policy))("TCP", (), key, 80, "OUT")[0]


def test_no_deny_name_leaves_the_policy_alone(tmp_path: Path) -> None:
    policy = load(tmp_path, "net=ALLOW|TCP|db.example|5432|OUT\nnet=DENY|*|10.0.0.0/8|*|OUT\n")

    def never(name: str) -> list[str]:
        raise AssertionError(f"resolved {name}")

    assert netrules.pin_deny_names(policy, never) is policy


def test_an_unresolvable_deny_name_stops_the_run(tmp_path: Path) -> None:
    policy = load(tmp_path, "net=ALLOW|*|*|*|OUT\nnet=DENY|*|nowhere.invalid|*|OUT\n")
    with pytest.raises(ConfigError) as info:
        netrules.pin_deny_names(policy, fake_resolve)
    (problem,) = info.value.problems
    assert problem.where == ".py-sandboxes(2)"
    assert "net=DENY|*|nowhere.invalid|*|OUT" in problem.message
    assert "cannot resolve nowhere.invalid" in problem.message


def test_an_empty_answer_is_unresolvable(tmp_path: Path) -> None:
    policy = load(tmp_path, "net=DENY|*|empty.example|*|OUT\n")
    with pytest.raises(ConfigError):
        netrules.pin_deny_names(policy, lambda name: [])


def test_resolve_name_answers_once_per_process() -> None:
    first = netrules.resolve_name("localhost")
    assert "127.0.0.1" in first
    assert netrules.resolve_name("localhost") is first  # the run's one answer, reused
    with pytest.raises(OSError):
        netrules.resolve_name("nowhere.invalid")


def test_wildcard_bind_hosts() -> None:
    assert netrules.is_wildcard_bind("0.0.0.0")
    assert netrules.is_wildcard_bind("::")
    assert netrules.is_wildcard_bind("0.0.0.0/0")
    assert not netrules.is_wildcard_bind("127.0.0.1")
    assert not netrules.is_wildcard_bind("*")
    assert not netrules.is_wildcard_bind("10.0.0.0/8")
