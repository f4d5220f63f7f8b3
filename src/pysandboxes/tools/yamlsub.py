"""The subset of YAML that ``python-sb --export`` writes, written and read back (standard library).

Kubernetes manifests are YAML; the standard library has no YAML. The exporter needs to write
manifests with comments (what Kubernetes cannot express is said in the manifest itself), and
``--review`` needs to read two versions back. Both use this subset:

- block mappings (``key: value``) and block sequences (``- item``), nested by indentation;
- scalars: double-quoted strings (JSON escapes), single-quoted strings, plain words, integers,
  ``true``/``false``, ``null``; literal block scalars (``|`` and ``|-``) for multi-line text;
- ``{}`` and ``[]`` for empty collections; ``#`` comments; ``---`` between documents.

Anchors, aliases, tags, flow collections with content and multi-line plain scalars are refused
with the line number (:class:`YamlError`): a reviewer's tool must not guess at a manifest.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Comment", "YamlError", "dump_all", "load_all"]


class YamlError(ValueError):
    """A document outside the subset, with its line number."""


class Comment:
    """Comment lines written where this object stands as a mapping *value* under a key that
    starts with ``#`` (``{"#1": Comment("why"), ...}``): the key is not written, the text is,
    as ``# ...`` lines at that place. Readers never see comments."""

    __slots__ = ("lines",)

    def __init__(self, *lines: str) -> None:
        self.lines = [part for line in lines for part in line.splitlines()] or [""]


_PLAIN_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./")
_RESERVED = frozenset({"true", "false", "null", "yes", "no", "on", "off", "~", ""})


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise TypeError(f"cannot write {type(value).__name__} as YAML")
    if (
        value.lower() not in _RESERVED
        and set(value) <= _PLAIN_SAFE
        and not value[0].isdigit()
        and value[0] not in "-."
    ):
        return value
    return json.dumps(value, ensure_ascii=False)


def _emit(value: Any, indent: int, out: list[str]) -> None:
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            out[-1] += " {}"
            return
        for key, item in value.items():
            if isinstance(item, Comment):
                out.extend(f"{pad}# {line}".rstrip() for line in item.lines)
                continue
            head = f"{pad}{_scalar(key)}:"
            _emit_item(head, item, indent, out)
        return
    if isinstance(value, list):
        if not value:
            out[-1] += " []"
            return
        for item in value:
            if isinstance(item, dict) and item:
                first = True
                for key, sub in item.items():
                    if isinstance(sub, Comment):
                        out.extend(f"{pad}  # {line}".rstrip() for line in sub.lines)
                        continue
                    head = f"{pad}- {_scalar(key)}:" if first else f"{pad}  {_scalar(key)}:"
                    first = False
                    _emit_item(head, sub, indent + 2, out)
            else:
                _emit_item(f"{pad}-", item, indent, out)
        return
    raise TypeError("a document is a mapping or a sequence")


def _emit_item(head: str, item: Any, indent: int, out: list[str]) -> None:
    if isinstance(item, dict | list):
        out.append(head)
        if item:
            _emit(item, indent + 2, out)
        else:
            out[-1] += " {}" if isinstance(item, dict) else " []"
    elif isinstance(item, str) and "\n" in item:
        chomp = "" if item.endswith("\n") else "-"
        out.append(f"{head} |{chomp}")
        body = item[:-1] if item.endswith("\n") else item
        out.extend((" " * (indent + 2) + line).rstrip() for line in body.split("\n"))
    else:
        out.append(f"{head} {_scalar(item)}")


def dump_all(documents: list[Any], header: list[str] | None = None) -> str:
    """The documents as YAML text, ``---`` before each; ``header``: comment lines on top."""

    out = [f"# {line}".rstrip() for line in header or []]
    for document in documents:
        out.append("---")
        _emit(document, 0, out)
    return "\n".join(out) + "\n"


# -- reading -------------------------------------------------------------------------------------


class _Line:
    __slots__ = ("indent", "number", "text")

    def __init__(self, number: int, indent: int, text: str) -> None:
        self.number = number
        self.indent = indent
        self.text = text


def _strip_comment(text: str) -> str:
    """``text`` without a trailing ``# comment`` (outside quotes)."""

    quote = ""
    for i, ch in enumerate(text):
        if quote:
            if ch == "\\" and quote == '"':
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip()
    return text.rstrip()


def _parse_scalar(text: str, number: int) -> Any:
    if text.startswith('"'):
        try:
            return json.loads(text)
        except ValueError:
            raise YamlError(f"line {number}: bad double-quoted string {text}") from None
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'"):
            raise YamlError(f"line {number}: bad single-quoted string {text}")
        return text[1:-1].replace("''", "'")
    if text == "{}":
        return {}
    if text == "[]":
        return []
    if text[:1] in "&*!{[|>@`%":
        raise YamlError(
            f"line {number}: {text!r} is outside the YAML subset python-sb reads (anchors, "
            "aliases, tags and flow collections are not read)"
        )
    if text in ("null", "~"):
        return None
    if text == "true":
        return True
    if text == "false":
        return False
    try:
        return int(text)
    except ValueError:
        return text


class _Reader:
    def __init__(self, lines: list[_Line], raw: list[str]) -> None:
        self.lines = lines
        self.raw = raw
        self.pos = 0

    def peek(self) -> _Line | None:
        return self.lines[self.pos] if self.pos < len(self.lines) else None

    def block(self, indent: int) -> Any:
        line = self.peek()
        if line is None:
            return None
        if line.text.startswith("- ") or line.text == "-":
            return self.sequence(line.indent)
        return self.mapping(line.indent)

    def mapping(self, indent: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while (line := self.peek()) is not None and line.indent == indent:
            if line.text.startswith("- "):
                break
            self.pos += 1
            self.entry(line, line.text, indent, out)
        line = self.peek()
        if line is not None and line.indent > indent:
            raise YamlError(f"line {line.number}: unexpected indentation")
        return out

    def entry(self, line: _Line, text: str, indent: int, out: dict[str, Any]) -> None:
        key, sep, rest = text.partition(":")
        if not sep or (rest and not rest.startswith(" ")):
            raise YamlError(f"line {line.number}: expected 'key: value', got {text!r}")
        name = _parse_scalar(key.strip(), line.number)
        if not isinstance(name, str):
            name = str(name)
        if name in out:
            raise YamlError(f"line {line.number}: key {name!r} given twice")
        rest = rest.strip()
        if rest in ("|", "|-"):
            out[name] = self.literal(line, indent, keep=rest == "|")
        elif rest:
            out[name] = _parse_scalar(rest, line.number)
        else:
            nxt = self.peek()
            if nxt is not None and (
                nxt.indent > indent or (nxt.indent == indent and nxt.text.startswith("- "))
            ):
                out[name] = self.block(nxt.indent)
            else:
                out[name] = None

    def sequence(self, indent: int) -> list[Any]:
        out: list[Any] = []
        while (line := self.peek()) is not None and line.indent == indent:
            if not (line.text.startswith("- ") or line.text == "-"):
                break
            self.pos += 1
            rest = line.text[1:].strip()
            if not rest:
                nxt = self.peek()
                out.append(self.block(nxt.indent) if nxt and nxt.indent > indent else None)
                continue
            _key, sep, tail = rest.partition(":")
            if sep and (not tail or tail.startswith(" ")) and not rest.startswith(("'", '"')):
                item: dict[str, Any] = {}
                inner = indent + 2
                self.entry(_Line(line.number, inner, rest), rest, inner, item)
                while (nxt := self.peek()) is not None and nxt.indent == inner:
                    if nxt.text.startswith("- "):
                        break
                    self.pos += 1
                    self.entry(nxt, nxt.text, inner, item)
                out.append(item)
            else:
                out.append(_parse_scalar(rest, line.number))
        return out

    def literal(self, line: _Line, indent: int, keep: bool) -> str:
        """A ``|`` block: the raw lines indented deeper than ``indent`` (blank lines included)."""

        body: list[str] = []
        start = line.number  # 1-based number of the header line; raw index of the next line
        index = start
        block_indent: int | None = None
        while index < len(self.raw):
            raw = self.raw[index]
            stripped = raw.strip()
            width = len(raw) - len(raw.lstrip(" "))
            if stripped and width <= indent:
                break
            if stripped and block_indent is None:
                block_indent = width
            body.append(raw[block_indent or 0 :] if stripped else "")
            index += 1
        while body and not body[-1]:
            body.pop()
        # skip the parsed lines that belonged to the block
        while (nxt := self.peek()) is not None and nxt.number <= index:
            self.pos += 1
        text = "\n".join(body)
        return text + "\n" if keep and body else text


def load_all(text: str) -> list[Any]:
    """The documents of ``text`` (empty documents left out); :class:`YamlError` outside the
    subset."""

    raw = text.split("\n")
    documents: list[list[_Line]] = [[]]
    for number, line in enumerate(raw, 1):
        if "\t" in line[: len(line) - len(line.lstrip())]:
            raise YamlError(f"line {number}: a tab in the indentation")
        if line.rstrip() == "---":
            documents.append([])
            continue
        if line.startswith("%"):
            raise YamlError(f"line {number}: YAML directives are not read")
        content = _strip_comment(line)
        if not content.strip():
            continue
        indent = len(content) - len(content.lstrip(" "))
        documents[-1].append(_Line(number, indent, content.strip()))
    out = []
    for lines in documents:
        if not lines:
            continue
        reader = _Reader(lines, raw)
        value = reader.block(lines[0].indent)
        left = reader.peek()
        if left is not None:
            raise YamlError(f"line {left.number}: unexpected content {left.text!r}")
        out.append(value)
    return out
