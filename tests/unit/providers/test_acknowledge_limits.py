"""``limits.unacknowledged``: an ``acknowledge=`` id silences the start warnings that are its
limit's sentence, whatever the fields and the provider's prefix, and no other limit's."""

from __future__ import annotations

import string

from pysandboxes.providers import limits


def filled(limit: limits.Limit, value: str) -> str:
    names = {name for _, name, _, _ in string.Formatter().parse(limit.text) if name}
    return limit.text.format(**dict.fromkeys(names, value))


ANNOUNCED = [limit for limit in limits.LIMITS if limit.status == limits.LIMIT]


def test_each_limit_silences_its_own_sentence_and_no_other() -> None:
    warnings = [f"bwrap, py-sandbox=false: {filled(limit, 'a: b (c)')}" for limit in ANNOUNCED]
    for index, limit in enumerate(ANNOUNCED):
        left = limits.unacknowledged(warnings, (limit.key,))
        assert left == warnings[:index] + warnings[index + 1 :], limit.key


def test_every_id_that_can_be_acknowledged_is_an_announced_limit() -> None:
    for limit in limits.LIMITS:
        problem = limits.acknowledge_problem(limit.key)
        assert (problem is None) == (limit.status == limits.LIMIT), limit.key


def test_no_acknowledgement_keeps_every_warning() -> None:
    warnings = ["landlock: something else entirely"]
    assert limits.unacknowledged(warnings, ()) is warnings
    assert limits.unacknowledged(warnings, ("all.no-enforcer",)) == warnings
