"""The load-following deadlines of the eval tests (``deadlines.py``): what they change, and
that they change nothing else (no timing assertion: pure functions of their inputs)."""

from __future__ import annotations

from pysandboxes.evalguard.api import resolve
from tests.redteam.eval.corpus import RULES
from tests.redteam.eval.deadlines import load_factor, scaled, scaled_text


def test_only_the_deadline_is_multiplied() -> None:
    out = scaled(RULES, 4.0)
    assert [line for line in out if not line.startswith("eval-timeout=")] == [
        line for line in RULES if not line.startswith("eval-timeout=")
    ]
    assert resolve(None, out).timeout == 4 * resolve(None, RULES).timeout


def test_low_load_keeps_the_rules_as_they_are() -> None:
    assert scaled(RULES, 1.0) is RULES
    assert scaled(RULES, 0.3) is RULES
    text = "eval-syntax=arith\neval-timeout=500ms\n"
    assert scaled_text(text, 1.0) is text
    assert scaled_text(text, 2.0) == "eval-syntax=arith\neval-timeout=1.000s\n"
    assert scaled(["eval-timeout=2"], 3.0) == ["eval-timeout=6.000s"]
    assert load_factor() >= 1.0
