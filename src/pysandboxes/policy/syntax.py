"""The lexical layer of the rule language: one line into a key and a value (SPEC §2.1).

A value is scanned once into *parts*: literal text and :class:`Var` references
(``${NAME}``, ``${NAME:-default}``, defaults nest). Quotes group text: inside double quotes
``#`` is literal and variables still expand; inside single quotes everything is literal
(the one way to write a literal ``$``). The quotes themselves are not part of the value.
Unquoted ``#`` starts a comment. Any ``$`` that does not open ``${...}`` is an error.

Nothing here touches the file system or the environment: :func:`expand` takes the variables as
a mapping, so the same parts can be expanded against the environment of ``python-sb`` at load
time, or against the host environment when the child's environment is built (``env=``).
"""

from __future__ import annotations

from pysandboxes.record import Record as _Record

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = [
    "LineSyntaxError",
    "Var",
    "expand",
    "is_var_name",
    "scan_value",
    "split_line",
]

_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_CHARS = _NAME_START | frozenset("0123456789")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.:_")
_BLANKS = " \t"


class LineSyntaxError(ValueError):
    """A problem in one line; the loader adds ``FILE(LINE)``."""


class Var(_Record):
    """``${name}`` (``default is None``) or ``${name:-default}``."""

    __slots__ = ("default", "name")
    _fields = ("name", "default")
    name: str
    default: tuple[Part, ...] | None

    def __init__(self, name: str, default: tuple[Part, ...] | None = None) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "default", default)


Part = str | Var


def is_var_name(name: str, *, pattern: bool = False) -> bool:
    """A variable name: ``[A-Za-z_][A-Za-z0-9_]*``; with ``pattern``, ``*`` is allowed too."""

    if not name:
        return False
    if pattern:
        return all(c in _NAME_CHARS or c == "*" for c in name) and not name[0].isdigit()
    return name[0] in _NAME_START and all(c in _NAME_CHARS for c in name)


def split_line(line: str) -> tuple[str, str] | None:
    """``None`` for a blank or comment line, ``("include", rest)`` for an include directive,
    else ``(key, raw_value)``. Raises :class:`LineSyntaxError` for anything else."""

    text = line.strip(_BLANKS + "\r\n\f\v")
    if not text or text[0] == "#":
        return None
    eq = text.find("=")
    if text.startswith("include") and (eq < 0 or text[7:8] in ('"', " ", "\t", "'")):
        rest = text[7:]
        if rest[:1] not in ('"', " ", "\t", "'"):
            raise LineSyntaxError(_NOT_A_RULE)
        return ("include", rest.lstrip(_BLANKS))
    if eq < 0:
        raise LineSyntaxError(_NOT_A_RULE)
    key = text[:eq]
    value = text[eq + 1 :]
    if key != key.rstrip(_BLANKS) or value[:1] in (" ", "\t"):
        raise LineSyntaxError("no spaces are allowed around the first '=' (write key=value)")
    if key not in _GOOD_KEYS and not _key_ok(key):
        raise LineSyntaxError(
            f"{key!r} is not a key: keys are lower-case words such as os-sandbox or net"
            if key
            else _NOT_A_RULE
        )
    return (key, value)


_GOOD_KEYS: set[str] = set()  # keys already seen well-formed (a file repeats a few keys)


def _key_ok(key: str) -> bool:
    if key and key[0].isalpha() and all(c in _KEY_CHARS for c in key):
        if len(_GOOD_KEYS) < 256:
            _GOOD_KEYS.add(key)
        return True
    return False


_NOT_A_RULE = 'not a rule: expected key=value, include "PATH", a # comment or an empty line'


def scan_value(
    text: str,
    *,
    comments: bool = True,
    var_check: Callable[[str], str | None] | None = None,
) -> tuple[tuple[Part, ...], int]:
    """Scan ``text`` into parts; return them and the index where the value ends (a comment).

    Trailing unquoted blanks are dropped. ``var_check(name)`` may return an error message for a
    variable name (used to allow ``${PAT_*}`` only in ``env=``); by default a name must be a
    plain variable name.
    """

    if "$" not in text and "#" not in text and '"' not in text and "'" not in text:
        value = text.rstrip(_BLANKS)
        return ((value,) if value else ()), len(text)
    parts, end = _scan(text, 0, comments, var_check, in_default=False)
    return parts, end


def _find_any(text: str, i: int, chars: str) -> int:
    """The index of the first of ``chars`` in ``text`` from ``i`` (``len(text)`` if none)."""

    best = len(text)
    for ch in chars:
        j = text.find(ch, i, best)
        if j >= 0:
            best = j
    return best


def _scan(
    text: str,
    i: int,
    comments: bool,
    var_check: Callable[[str], str | None] | None,
    *,
    in_default: bool,
) -> tuple[tuple[Part, ...], int]:
    # Text is taken in runs between special characters (str.find, not a loop per character).
    # ``protected`` is the length of the literal text that ends with quoted text: unquoted
    # blanks after it, at the end of the value, are dropped.
    parts: list[Part] = []
    buf: list[str] = []
    size = protected = 0
    stops = "$\"'" + ("#" if comments else "") + ("}" if in_default else "")
    n = len(text)

    def flush(strip: bool) -> None:
        nonlocal buf, size, protected
        literal = "".join(buf)
        if strip:
            literal = literal[:protected] + literal[protected:].rstrip(_BLANKS)
        if literal:
            parts.append(literal)
        buf, size, protected = [], 0, 0

    while i < n:
        j = _find_any(text, i, stops)
        if j > i:
            buf.append(text[i:j])
            size += j - i
            i = j
            if i >= n:
                break
        c = text[i]
        if c == "$":
            if text.startswith("${", i):
                flush(False)
                var, i = _scan_var(text, i + 2, comments, var_check)
                parts.append(var)
                continue
            raise LineSyntaxError(
                f"'${text[i + 1 : i + 2]}...' is not a variable: write ${{NAME}} or "
                "${NAME:-default}, or put a literal '$' inside single quotes"
            )
        if c == "'":
            close = text.find("'", i + 1)
            if close < 0:
                raise LineSyntaxError("unterminated ' quote")
            buf.append(text[i + 1 : close])
            size += close - i - 1
            protected = size
            i = close + 1
            continue
        if c == '"':
            i += 1
            while True:
                k = _find_any(text, i, '"$')
                if k >= n:
                    raise LineSyntaxError('unterminated " quote')
                buf.append(text[i:k])
                size += k - i
                protected = size
                if text[k] == '"':
                    i = k + 1
                    break
                if not text.startswith("${", k):
                    raise LineSyntaxError(
                        f"'${text[k + 1 : k + 2]}...' is not a variable: write ${{NAME}} or "
                        "${NAME:-default}, or put a literal '$' inside single quotes"
                    )
                flush(False)
                var, i = _scan_var(text, k + 2, comments, var_check)
                parts.append(var)
            continue
        if c == "#":  # only a stop when comments are on
            break
        # c == "}" and in_default: the end of a default
        flush(True)
        return tuple(parts), i + 1
    if in_default:
        raise LineSyntaxError(
            "unterminated '${': a '}' is missing (an unquoted '#' starts a comment)"
        )
    flush(True)
    return tuple(parts), i


def _scan_var(
    text: str, i: int, comments: bool, var_check: Callable[[str], str | None] | None
) -> tuple[Var, int]:
    start = i
    n = len(text)
    while i < n and (text[i] in _NAME_CHARS or text[i] == "*"):
        i += 1
    name = text[start:i]
    if var_check is not None and name:
        problem = var_check(name)
        if problem:
            raise LineSyntaxError(problem)
    elif not is_var_name(name):
        shown = name or text[start : start + 1]
        raise LineSyntaxError(f"{('${' + shown)!r} is not a valid variable name")
    if text.startswith("}", i):
        return Var(name), i + 1
    if text.startswith(":-", i):
        default, i = _scan(text, i + 2, comments, var_check, in_default=True)
        return Var(name, default), i
    raise LineSyntaxError(
        f"'${{{name}' must be followed by '}}' or ':-default}}' (only ${{NAME}} and "
        "${NAME:-default} are variables)"
    )


def expand(
    parts: tuple[Part, ...],
    lookup: Callable[[str], str | None],
) -> str:
    """The text of ``parts`` with each variable replaced by ``lookup(name)``.

    An unset (``None``) or empty variable takes its default; without one it expands to ``""``.
    """

    if len(parts) == 1 and isinstance(parts[0], str):
        return parts[0]
    out: list[str] = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
            continue
        value = lookup(part.name)
        if not value and part.default is not None:
            value = expand(part.default, lookup)
        out.append(value or "")
    return "".join(out)


def env_lookup(environ: Mapping[str, str]) -> Callable[[str], str | None]:
    """A ``lookup`` for :func:`expand` reading a mapping."""

    return environ.get


def has_vars(parts: tuple[Part, ...]) -> bool:
    return any(isinstance(p, Var) for p in parts)
