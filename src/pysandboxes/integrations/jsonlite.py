"""JSON for the hook, without ``import json``.

The agent starts ``python-sb --hook`` before every shell command; the standard ``json`` module
imports ``re`` at load time, which costs about as much as the rest of the hook together. The
payloads are small: this reader and writer implement RFC 8259 exactly (the number grammar, the
string escapes with surrogate pairs, no NaN/Infinity) and are checked against ``json`` by a
property test. ``ValueError`` for anything that is not JSON, as ``json.loads`` raises.
"""

from __future__ import annotations

__all__ = ["dumps", "loads"]

_WHITESPACE = " \t\n\r"
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_MAX_DEPTH = 200
_HEX = frozenset("0123456789abcdefABCDEF")


def loads(text: str) -> object:
    """The value of the JSON document ``text`` (``ValueError`` if it is not one)."""

    reader = _Reader(text)
    value = reader.value(0)
    reader.skip()
    if reader.pos != len(text):
        raise ValueError(f"extra data at character {reader.pos + 1}")
    return value


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        text = self.text
        while self.pos < len(text) and text[self.pos] in _WHITESPACE:
            self.pos += 1

    def error(self, what: str) -> ValueError:
        return ValueError(f"{what} at character {self.pos + 1}")

    def value(self, depth: int) -> object:
        if depth > _MAX_DEPTH:
            raise self.error("nested too deeply")
        self.skip()
        text = self.text
        if self.pos >= len(text):
            raise self.error("expected a value")
        c = text[self.pos]
        if c == "{":
            return self.obj(depth)
        if c == "[":
            return self.array(depth)
        if c == '"':
            return self.string()
        for word, result in (("true", True), ("false", False), ("null", None)):
            if text.startswith(word, self.pos):
                self.pos += len(word)
                return result
        if c == "-" or c.isdigit():
            return self.number()
        raise self.error(f"unexpected {c!r}")

    def obj(self, depth: int) -> dict[str, object]:
        self.pos += 1
        result: dict[str, object] = {}
        self.skip()
        if self.text[self.pos : self.pos + 1] == "}":
            self.pos += 1
            return result
        while True:
            self.skip()
            if self.text[self.pos : self.pos + 1] != '"':
                raise self.error("expected a string key")
            key = self.string()
            self.skip()
            if self.text[self.pos : self.pos + 1] != ":":
                raise self.error("expected ':'")
            self.pos += 1
            result[key] = self.value(depth + 1)
            self.skip()
            c = self.text[self.pos : self.pos + 1]
            self.pos += 1
            if c == "}":
                return result
            if c != ",":
                self.pos -= 1
                raise self.error("expected ',' or '}'")

    def array(self, depth: int) -> list[object]:
        self.pos += 1
        result: list[object] = []
        self.skip()
        if self.text[self.pos : self.pos + 1] == "]":
            self.pos += 1
            return result
        while True:
            result.append(self.value(depth + 1))
            self.skip()
            c = self.text[self.pos : self.pos + 1]
            self.pos += 1
            if c == "]":
                return result
            if c != ",":
                self.pos -= 1
                raise self.error("expected ',' or ']'")

    def string(self) -> str:
        text = self.text
        self.pos += 1
        out: list[str] = []
        while True:
            start = self.pos
            while self.pos < len(text) and text[self.pos] not in '"\\' and text[self.pos] >= " ":
                self.pos += 1
            out.append(text[start : self.pos])
            if self.pos >= len(text):
                raise self.error("unterminated string")
            c = text[self.pos]
            if c == '"':
                self.pos += 1
                return "".join(out)
            if c != "\\":
                raise self.error("control character in a string")
            escape = text[self.pos + 1 : self.pos + 2]
            if escape in _ESCAPES:
                out.append(_ESCAPES[escape])
                self.pos += 2
            elif escape == "u":
                code = self.hex4(self.pos + 2)
                self.pos += 6
                if 0xD800 <= code <= 0xDBFF and text.startswith("\\u", self.pos):
                    low = self.hex4(self.pos + 2)
                    if 0xDC00 <= low <= 0xDFFF:
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        self.pos += 6
                out.append(chr(code))
            else:
                raise self.error("invalid escape")

    def hex4(self, at: int) -> int:
        digits = self.text[at : at + 4]
        if len(digits) != 4 or not all(c in _HEX for c in digits):
            raise self.error("invalid \\u escape")
        return int(digits, 16)

    def number(self) -> int | float:
        text = self.text
        start = self.pos
        i = self.pos
        if text[i] == "-":
            i += 1
        if i < len(text) and text[i] == "0":
            i += 1
        elif i < len(text) and "1" <= text[i] <= "9":
            while i < len(text) and text[i].isdigit() and text[i].isascii():
                i += 1
        else:
            raise self.error("invalid number")
        is_float = False
        if i < len(text) and text[i] == ".":
            i += 1
            if not (i < len(text) and text[i].isascii() and text[i].isdigit()):
                raise self.error("invalid number")
            while i < len(text) and text[i].isascii() and text[i].isdigit():
                i += 1
            is_float = True
        if i < len(text) and text[i] in "eE":
            i += 1
            if i < len(text) and text[i] in "+-":
                i += 1
            if not (i < len(text) and text[i].isascii() and text[i].isdigit()):
                raise self.error("invalid number")
            while i < len(text) and text[i].isascii() and text[i].isdigit():
                i += 1
            is_float = True
        self.pos = i
        literal = text[start:i]
        return float(literal) if is_float else int(literal)


def dumps(value: object) -> str:
    """``value`` (dicts with string keys, lists, strings, booleans, None, ints) as compact,
    ASCII-only JSON, as ``json.dumps`` writes it."""

    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(dumps(item) for item in value) + "]"
    if isinstance(value, dict):
        items = (f"{_string(str(key))}: {dumps(item)}" for key, item in value.items())
        return "{" + ", ".join(items) + "}"
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _string(text: str) -> str:
    out = ['"']
    for c in text:
        if c in _SHORT:
            out.append(_SHORT[c])
        elif " " <= c <= "~":
            out.append(c)
        else:
            code = ord(c)
            if code > 0xFFFF:
                code -= 0x10000
                out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
            else:
                out.append(f"\\u{code:04x}")
    out.append('"')
    return "".join(out)
