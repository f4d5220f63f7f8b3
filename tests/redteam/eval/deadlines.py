"""Evaluation deadlines that follow this machine's load, for tests whose evaluation must *finish*.

A guarded evaluation's ``eval-timeout`` counts wall time from the request to the answer: on a
loaded machine the worker waits its turn for a CPU, and a legitimate source given 500 ms can
run out of it before its first instruction (issue 29: at load 12-17 on 2 cores, up to 21
eval tests of ``tests/redteam`` failed that way, and passed at low load). A test that expects
an evaluation to succeed, or to be refused for another reason than time (a memory bound, a
denial, a name that stays unchanged), gets its deadline multiplied by the machine's measured
load per CPU (:func:`load_factor`, never below 1): the outcome kind it asserts is the same at
any load, and at low load the rules are exactly the corpus's.

Tests whose outcome *is* the deadline (a long C call killed at ``eval-timeout``) keep the
corpus's deadline: scaling it would only make them wait longer. Nothing here asserts on time.
"""

from __future__ import annotations

import os


def _seconds(value: str) -> float:
    """``700ms``, ``8s`` or ``2`` in seconds (the forms ``eval-timeout=`` takes)."""

    if value.endswith("ms"):
        return float(value[:-2]) / 1000
    return float(value[:-1] if value.endswith("s") else value)


def load_factor() -> float:
    """The one-minute load average per CPU of this machine, at least 1 (measured now)."""

    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this platform
        return 1.0
    return max(1.0, load / (os.cpu_count() or 1))


def scaled(rules: list[str], factor: float | None = None) -> list[str]:
    """``rules`` with their ``eval-timeout=`` lines multiplied by ``factor`` (default
    :func:`load_factor`); the same list object when nothing changes, so that a test at low
    load shares the warm worker of the unscaled rules."""

    factor = load_factor() if factor is None else factor
    if factor <= 1.0:
        return rules
    out = []
    for line in rules:
        key, eq, value = line.partition("=")
        if eq and key.strip() == "eval-timeout" and value.strip():
            line = f"eval-timeout={_seconds(value.strip()) * factor:.3f}s"
        out.append(line)
    return out


def scaled_text(text: str, factor: float | None = None) -> str:
    """A rule file's text with its ``eval-timeout=`` lines scaled as :func:`scaled` does."""

    lines = text.splitlines()
    new = scaled(lines, factor)
    return text if new is lines else "\n".join(new) + "\n"
