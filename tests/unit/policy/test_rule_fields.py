"""``RULE_FIELDS`` names every field of a policy that holds rules with an origin.

Code that merges or filters a policy's rules by origin (the Jupyter kernel's added rules,
learning's "which rules are this file's own") walks that one list. A rule key added to the
policy without being added there would be dropped by them silently: this test finds it.
"""

from __future__ import annotations

from pysandboxes.policy import parse_text
from pysandboxes.policy.model import RULE_FIELDS, Origin, Policy

#: Tuple fields that are not rules: bookkeeping of the load, shown by --explain.
NOT_RULES = {"rule_files", "includes", "lines", "warnings"}


def test_every_tuple_field_of_rules_is_listed() -> None:
    empty = Policy()
    tuples = {name for name in Policy._fields if getattr(empty, name) == ()}
    assert set(RULE_FIELDS) == tuples - NOT_RULES


def test_each_listed_field_holds_rules_with_an_origin() -> None:
    text = "\n".join(
        [
            "env=HOME=/root",
            "unenv=SECRET_*",
            "expose-ro=/usr",
            "expose-rw=/tmp",
            "ignore=/etc/shadow",
            "python-import=json",
            "python-api=ALLOW:os.getpid",
            "net=ALLOW|TCP|example.org|443|OUT",
            "secret=TOKEN|api.example.org|Authorization",
            "eval-import=math",
            "acknowledge=all.no-enforcer",
            "os-sandbox=qemu",
            "qemu.memory=256M",
        ]
    )
    policy = parse_text(text, "/nowhere/.py-sandboxes", environ={"TOKEN": "t"}, cwd="/")
    for name in RULE_FIELDS:
        rules = getattr(policy, name)
        assert rules, f"{name}: the rule text above should give it a rule"
        assert all(isinstance(rule.origin, Origin) for rule in rules), name
