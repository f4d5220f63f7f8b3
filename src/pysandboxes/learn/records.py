"""The access records the guard writes in learning and audit mode, parsed and deduplicated.

The guard (``pysandboxes.guard``) writes one JSON object per line to ``RunContext.record_fd``:

- ``{"kind": "file", "op": "read"|"write", "path": ...}``; with ``"by": "import-system"``, the
  import system's listing of a ``sys.path`` directory (:class:`ImportListing`)
- ``{"kind": "module-root", "path": ...}``: a directory a module of the run was found in (the
  ``sys.path`` entry of its top-level package)
- ``{"kind": "net", "proto", "host", "ip", "port", "dir"}`` (``port`` null and ``proto`` ``*``
  for a name looked up without a port or socket type)
- ``{"kind": "import", "name"}`` (sent once the module is loaded: a probe that found nothing
  is never sent), ``{"kind": "env", "name"}`` (a variable read by name),
  ``{"kind": "env-scan"}`` (the program went through the whole environment)
- ``{"kind": "api", "function", "category"}``, ``{"kind": "eval", ...}``

and, in audit mode, a ``"denial"`` object (``Denial.to_dict()``) on each line the rules would
refuse. :class:`Recording` turns that stream into sets of typed accesses: a program that opens
the same file a million times costs one entry. A line that is not a valid record is counted and
skipped, never fatal: what was recorded before and after it is kept.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pysandboxes.errors import Denial


@dataclass(frozen=True, slots=True)
class FileAccess:
    """A file or directory the program read (``write=False``) or changed (``write=True``)."""

    path: str
    write: bool


@dataclass(frozen=True, slots=True)
class ImportListing:
    """The import system listed a ``sys.path`` directory the rules do not expose. It searches
    every such directory on every import, whatever is imported: needed only when a module of
    the run was found there (:class:`ModuleRoot`)."""

    path: str


@dataclass(frozen=True, slots=True)
class ModuleRoot:
    """A directory a module of the run was found in (a ``sys.path`` entry)."""

    path: str


@dataclass(frozen=True, slots=True)
class NetAccess:
    """A connection, datagram, bind or listen. ``host`` is the name the program used, if any."""

    proto: str
    host: str | None
    ip: str
    port: int
    direction: str


@dataclass(frozen=True, slots=True)
class ImportAccess:
    """A module imported (the top-level name decides, SPEC §3.3)."""

    name: str

    @property
    def top_level(self) -> str:
        return self.name.split(".", 1)[0]


@dataclass(frozen=True, slots=True)
class EnvAccess:
    """An environment variable the program read."""

    name: str


@dataclass(frozen=True, slots=True)
class EnvScan:
    """The program went through the whole environment (iteration, ``.items()``, ``.copy()``,
    ``dict(os.environ)``, ``urllib.request.getproxies()``...): no variable is read by name."""


@dataclass(frozen=True, slots=True)
class ApiAccess:
    """A sensitive call (``python-api``) and its category."""

    function: str
    category: str


@dataclass(frozen=True, slots=True)
class EvalAccess:
    """Dynamically evaluated code: the construct names the guard reported, per ``eval-*`` key.

    ``items`` holds ``(key, name)`` pairs such as ``("eval-syntax", "arith")`` or
    ``("eval-call", "len")``, taken from the list fields of the record whose names match an
    ``eval-*`` key (``syntax``, ``call``, ``attribute``, ``import``, ``magic``).
    """

    items: tuple[tuple[str, str], ...]


Access = (
    FileAccess
    | ImportListing
    | ModuleRoot
    | NetAccess
    | ImportAccess
    | EnvAccess
    | EnvScan
    | ApiAccess
    | EvalAccess
)

#: Not a rule key: the mark of an evaluated source that no ``eval-*`` line makes pass.
UNGUARDED_KEY = "eval-unguarded"

#: Record fields of an ``eval`` line and the ``eval-*`` key each one feeds.
EVAL_FIELDS: dict[str, str] = {
    "syntax": "eval-syntax",
    "nodes": "eval-syntax",
    "call": "eval-call",
    "calls": "eval-call",
    "attribute": "eval-attribute",
    "attributes": "eval-attribute",
    "import": "eval-import",
    "imports": "eval-import",
    "magic": "eval-magic",
    "namespace": "eval-namespace",  # "adaptive": an exec whose dictionary the program reads
    # a source no eval-* line makes pass (code generation): learned as the unguarded builtins
    "unguarded": UNGUARDED_KEY,
}


def _text(data: dict[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value:
        raise ValueError(f"field {name!r} missing or not a string")
    return value


def parse_record(data: dict[str, Any]) -> Access:
    """One decoded JSON record as a typed access; ``ValueError`` when it is not one."""

    kind = data.get("kind")
    if kind == "file":
        op = data.get("op")
        if op not in ("read", "write"):
            raise ValueError(f"file record with op {op!r}")
        if data.get("by") == "import-system" and op == "read":
            return ImportListing(_text(data, "path"))
        return FileAccess(_text(data, "path"), op == "write")
    if kind == "module-root":
        return ModuleRoot(_text(data, "path"))
    if kind == "net":
        port = data.get("port")
        if port is None:
            port = 0  # a name looked up without a port
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
            raise ValueError(f"net record with port {port!r}")
        host = data.get("host")
        if host is not None and not isinstance(host, str):
            raise ValueError("net record with a non-string host")
        ip = data.get("ip")
        if not isinstance(ip, str):
            ip = ""
        if not ip and not host:
            raise ValueError("net record with neither host nor ip")
        proto = str(data.get("proto") or "TCP").upper()
        if proto == "*":
            proto = "TCP"  # a lookup for any socket type: written as TCP, like the guard suggests
        direction = str(data.get("dir") or "OUT").upper()
        if proto not in ("TCP", "UDP") or direction not in ("OUT", "IN"):
            raise ValueError(f"net record with proto {proto!r} dir {direction!r}")
        return NetAccess(proto, host or None, ip, port, direction)
    if kind == "import":
        return ImportAccess(_text(data, "name"))
    if kind == "env":
        return EnvAccess(_text(data, "name"))
    if kind == "env-scan":
        return EnvScan()
    if kind == "api":
        return ApiAccess(_text(data, "function"), str(data.get("category") or ""))
    if kind == "eval":
        items: list[tuple[str, str]] = []
        for name, key in EVAL_FIELDS.items():
            value = data.get(name)
            if isinstance(value, str):
                value = [value]
            if isinstance(value, list):
                items.extend((key, str(v)) for v in value if isinstance(v, str) and v)
        return EvalAccess(tuple(sorted(set(items))))
    raise ValueError(f"unknown record kind {kind!r}")


@dataclass
class Recording:
    """Every distinct access of one run, in first-seen order, and the audit denials.

    Feed it raw bytes as they arrive (:meth:`feed`): lines may be split across reads; an
    unterminated last line is parsed at :meth:`close`.
    """

    accesses: dict[Access, None] = field(default_factory=dict)
    denials: dict[tuple[str, str, str | None, str | None], tuple[Denial, Access | None]] = field(
        default_factory=dict
    )
    bad_lines: int = 0
    _pending: bytes = b""

    def feed(self, chunk: bytes) -> None:
        data = self._pending + chunk
        *lines, self._pending = data.split(b"\n")
        for line in lines:
            self.add_line(line)

    def close(self) -> None:
        if self._pending.strip():
            self.add_line(self._pending)
        self._pending = b""

    def add_line(self, line: bytes | str) -> None:
        if isinstance(line, bytes):
            line = line.decode("utf-8", "surrogateescape")
        if not line.strip():
            return
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError("not an object")
            self.add(data)
        except ValueError:
            self.bad_lines += 1

    def add(self, data: dict[str, Any]) -> None:
        """One decoded record. Raises ``ValueError`` when it is neither an access nor a denial."""

        access: Access | None
        try:
            access = parse_record(data)
        except ValueError:
            access = None
        raw = data.get("denial")
        if isinstance(raw, dict):
            denial = _denial(raw)
            key = (denial.kind, denial.target, denial.rule, denial.detail)
            if key not in self.denials:
                self.denials[key] = (denial, access)
        elif access is None:
            raise ValueError("not a record")
        if access is not None:
            self.accesses.setdefault(access, None)

    def of_type(self, kind: type[Any]) -> list[Any]:
        return [a for a in self.accesses if isinstance(a, kind)]

    def extend(self, records: Iterable[dict[str, Any]]) -> None:
        for record in records:
            self.add(record)


def _denial(raw: dict[str, Any]) -> Denial:
    def opt(name: str) -> str | None:
        value = raw.get(name)
        return None if value is None else str(value)

    return Denial(
        kind=str(raw.get("kind") or "?"),
        target=str(raw.get("target") or "?"),
        rule=opt("rule"),
        origin=opt("origin"),
        suggestion=opt("suggestion"),
        detail=opt("detail"),
    )
