"""What ``--learn`` records of a source the program evaluates: the ``eval-*`` items it needs.

The source is checked against empty rules (the base nodes only, nothing granted); every
violation that a rule line can lift becomes one ``(field, name)`` pair of an ``eval`` record
(``("syntax", "loop")``, ``("call", "len")``...), which the learning session turns into
``eval-syntax=loop``, ``eval-call=len`` lines. Violations no line can lift are not learned:
replayed, that source is refused as it would be under any rules.
"""

from __future__ import annotations

import ast

from pysandboxes.errors import EvalSyntaxRejected
from pysandboxes.evalguard import check
from pysandboxes.evalguard import rules as rules_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_FIELDS = {
    "eval-syntax": "syntax",
    "eval-call": "call",
    "eval-attribute": "attribute",
    "eval-import": "import",
    "eval-magic": "magic",
}
_EMPTY: list[rules_module.EvalRules] = []

#: The one item :func:`constructs` returns for a source that no ``eval-*`` line can make pass
#: (a library's own code generation, such as attrs' generated methods): learning then grants
#: ``builtins.compile`` unguarded (``python-api``), which a reviewer sees as such.
UNGUARDED = "unguarded"


def _empty_rules() -> rules_module.EvalRules:
    """Rules that grant nothing beyond the base nodes (every construct a violation)."""

    if not _EMPTY:
        _EMPTY.append(
            rules_module.EvalRules(
                profile=None,
                nodes=frozenset(rules_module.BASE_NODES),
                calls=frozenset(),
                denied_calls=frozenset(),
                attributes=frozenset(),
                attribute_groups=(),
                denied_attributes=frozenset(),
                imports=frozenset(),
                magic=frozenset(),
                namespace="closed",
                timeout=1.0,
                max_iterations=1,
                max_call_depth=1,
                max_alloc=1,
                max_nodes=10**9,
                max_output=1,
                lines=(),
            )
        )
    return _EMPTY[0]


def constructs(source: Any, mode: str) -> list[tuple[str, str]]:
    """``(field, name)`` pairs of the ``eval`` records for ``source`` (empty when it does not
    parse: the program's own eval raises the SyntaxError)."""

    if isinstance(source, ast.AST):
        source = ast.unparse(source)
    elif isinstance(source, (bytes, bytearray)):
        source = bytes(source).decode("utf-8", "replace")
    if not isinstance(source, str):
        return []
    try:
        check.parse(source, "eval" if mode == "eval" else "exec", _empty_rules())
    except EvalSyntaxRejected as exc:
        found = []
        for denial in exc.violations:
            key, _eq, name = (denial.suggestion or "").partition("=")
            field = _FIELDS.get(key)
            if field and name:
                found.append((field, name))
            else:
                # no eval-* line lifts this one: replayed guarded, the source would be refused
                return [(UNGUARDED, "")]
        return found
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return []
