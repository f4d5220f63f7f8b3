"""The ``eval-*`` part of ``--explain``: each profile's effective rules, defaults included.

Plain data (for ``--json``) and its text form; ``tools/explain.py`` calls these only when the
policy has ``eval-*`` lines, so ``--explain`` of other rule files never imports the eval
machinery.
"""

from __future__ import annotations

from pysandboxes.errors import ConfigError
from pysandboxes.evalguard import rules as rules_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from pysandboxes.policy.model import Policy


def profiles_data(policy: Policy) -> list[dict[str, Any]]:
    """One entry per profile: its syntax node groups, builtins, attributes, imports, magic,
    namespace and budgets (with ``[default]`` where no line sets them), or the error."""

    found: list[dict[str, Any]] = []
    for profile in rules_module.profiles(policy):
        entry: dict[str, Any] = {"profile": profile or "default"}
        try:
            rules = rules_module.build(policy, profile)
        except ConfigError as exc:
            entry["error"] = str(exc)
            found.append(entry)
            continue
        set_keys = {line.key.partition(":")[0] for line in rules.lines}
        groups = [g for g, nodes in rules_module.SYNTAX_GROUPS.items() if set(nodes) <= rules.nodes]
        entry.update(
            syntax=groups,
            calls=sorted(rules.calls),
            attributes=sorted(rules.attributes) + list(rules.attribute_groups),
            imports=sorted(rules.imports),
            magic=sorted(rules.magic),
            namespace=rules.namespace,
            budgets={
                "eval-timeout": f"{rules.timeout:g}s",
                "eval-max-iterations": rules.max_iterations,
                "eval-max-call-depth": rules.max_call_depth,
                "eval-max-alloc": rules.max_alloc,
                "eval-max-nodes": rules.max_nodes,
                "eval-max-output": rules.max_output,
            },
            defaults=sorted(k for k in rules_module.DEFAULTS if k not in set_keys),
            builtins_guarded=profile is None,
        )
        found.append(entry)
    return found


def render(entries: list[dict[str, Any]]) -> list[str]:
    """The text lines of :func:`profiles_data`."""

    out = ["guarded evaluation (eval-*; docs/eval.md):"]
    for entry in entries:
        name = entry["profile"]
        if "error" in entry:
            out.append(f"  profile {name}: REFUSED: {entry['error']}")
            continue
        way = (
            "eval/exec/compile and guarded_eval()"
            if entry["builtins_guarded"]
            else (f"guarded_eval(profile={name!r})")
        )
        out.append(f"  profile {name} (used by {way}):")
        out.append(f"    syntax: {', '.join(entry['syntax']) or '(base only)'}")
        out.append(f"    builtins present: {', '.join(entry['calls']) or 'none'}")
        out.append(f"    attributes: {', '.join(entry['attributes']) or 'none'}")
        out.append(f"    imports: {', '.join(entry['imports']) or 'none'}")
        if entry["magic"]:
            out.append(f"    dunder names: {', '.join(entry['magic'])}")
        out.append(f"    namespace: {entry['namespace']}")
        budgets = ", ".join(
            f"{k}={v}{' [default]' if k in entry['defaults'] else ''}"
            for k, v in entry["budgets"].items()
        )
        out.append(f"    budgets: {budgets}")
    out.append(
        "  in the program's own process these bounds are checked by the rewrite; a long C call "
        "is not interrupted (see docs/eval.md, Limits)"
    )
    return out
