"""Which learned values can be written into a rule file and read back with the same meaning.

A rule file line is ``key=value``; ``#`` starts a comment, ``$`` starts a variable, quotes are
syntax, leading and trailing blanks are dropped, a newline ends the line. A recorded value that
holds any of these would be read back as something else (a shorter path, another variable's
value), so learning skips it and says why instead of writing a rule that grants the wrong thing. A
file name that is not valid UTF-8 (kept by Python as lone surrogates) cannot be written either.
"""

from __future__ import annotations

import re

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def unsafe_reason(value: str, *, extra: str = "") -> str | None:
    """Why ``value`` cannot be written as (part of) a rule value, or ``None`` when it can.

    ``extra`` adds characters that are syntax for one key (``|`` and ``,`` in ``net=``).
    """

    if value == "":
        return "it is empty"
    if value != value.strip():
        return "it starts or ends with a blank"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "it is not valid UTF-8 (a rule file is UTF-8 text)"
    for char in value:
        if ord(char) < 32 or ord(char) == 127:
            return f"it holds the control character {char!r}"
        if char in "#$\"'" or char in extra:
            return f"it holds {char!r}, which the rule syntax would read differently"
    return None


def is_env_name(name: str) -> bool:
    """A plain variable name (``env=NAME=${NAME}`` reads back as the same variable)."""

    return _IDENTIFIER.match(name) is not None


def is_module_name(name: str) -> bool:
    """A top-level module name as ``python-import`` lists it."""

    return _MODULE.match(name) is not None


def shown(value: str) -> str:
    """A value for a warning: ``repr`` so that control characters stay visible."""

    return repr(value)
