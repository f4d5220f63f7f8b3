"""The typed, immutable policy that every enforcer reads (DESIGN decision 1).

Rule text is parsed once (``pysandboxes.policy.load_policy``) into a :class:`Policy`. The
Python layer (``guard``), every kernel provider and the tools (``--explain``, learning) read
this object; nothing downstream re-interprets rule text. Every rule keeps its :class:`Origin`
so that any message naming a rule can name where it was written.

The policy crosses to the sandboxed child as plain data (:meth:`Policy.to_data` /
:meth:`Policy.from_data`: dicts, lists, strings, numbers, booleans, ``None``), encoded with
``marshal`` by the launcher, never as a pickle; :meth:`Policy.to_json` gives the same data as
JSON for tools and tests.

This module is imported by the child before the program runs: standard library only, cheap.
"""

from __future__ import annotations

import os

from pysandboxes.record import Record as _Record

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any, Literal, TypeAlias

    Action: TypeAlias = Literal["ALLOW", "DENY"]
    Proto: TypeAlias = Literal["TCP", "UDP", "*"]
    Direction: TypeAlias = Literal["OUT", "IN", "*"]
    Provider: TypeAlias = Literal["none", "subprocess", "landlock", "bwrap", "unshare", "qemu"]
else:  # at run time the aliases are plain ``str`` (``typing`` is not imported for them)
    Action = Proto = Direction = Provider = str

PROVIDERS: tuple[str, ...] = ("none", "subprocess", "landlock", "bwrap", "unshare", "qemu")
KERNEL_PROVIDERS: tuple[str, ...] = ("landlock", "bwrap", "unshare", "qemu")

#: The eight ``python-api`` categories (SPEC §3.5).
API_CATEGORIES: tuple[str, ...] = (
    "process-exec",
    "process-control",
    "privileges",
    "threads",
    "native",
    "introspection",
    "dynamic-code",
    "deserialization",
)


#: The home directory :func:`display_path` shows as ``~`` once :func:`set_display_home` was
#: called (in the sandboxed child: python-sb's own home, ``RunContext.home``); ``None`` until
#: then: this process's ``~``.
_DISPLAY_HOME: list[str | None] = [None]


def set_display_home(home: str) -> None:
    """Show paths below ``home`` as ``~/...`` (``""``: no ``~`` form). Called when the guard is
    armed: the child's environment need not hold ``HOME`` (looking it up there would also be
    a read of the variable by the program, in the eyes of learning mode)."""

    _DISPLAY_HOME[0] = home


def display_path(path: str) -> str:
    """A path as messages show it: relative to the cwd when below it, ``~/...`` below home.

    SPEC §2.1. Computed at display time (the cwd may change).
    """

    try:
        cwd = os.getcwd()
    except OSError:
        cwd = ""
    home = _DISPLAY_HOME[0]
    if home is None:
        home = os.path.expanduser("~")
    if cwd and cwd != "/" and (path == cwd or path.startswith(cwd.rstrip("/") + "/")):
        rel = os.path.relpath(path, cwd)
        return rel
    if home and home != "/" and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")) :]
    return path


_set = object.__setattr__


class Origin(_Record):
    """Where a rule was written: a file (absolute path) and 1-based line, or the command line/API.

    ``file is None`` means ``<arg>`` (a ``--key=value`` option or a keyword rule of the API).
    ``learned`` marks a line inside a block written by learning mode (a missing exposed path
    there is skipped with a warning instead of being an error, SPEC §2.2).
    """

    __slots__ = ("file", "learned", "line")
    _fields = ("file", "line", "learned")
    file: str | None
    line: int
    learned: bool

    def __init__(self, file: str | None, line: int = 0, learned: bool = False) -> None:
        _set(self, "file", file)
        _set(self, "line", line)
        _set(self, "learned", learned)

    @property
    def is_arg(self) -> bool:
        return self.file is None

    def __str__(self) -> str:
        if self.file is None:
            return "<arg>"
        return f"{display_path(self.file)}({self.line})"

    @property
    def sort_key(self) -> tuple[str, int]:
        # <arg> sorts after every file, in the order given.
        return ("\uffff<arg>" if self.file is None else self.file, self.line)


ARG = Origin(None, 0)


class RuleLine(_Record):
    """One ``key=value`` line as written (after variable expansion), with its origin."""

    __slots__ = ("key", "origin", "value")
    _fields = ("key", "value", "origin")
    key: str
    value: str
    origin: Origin

    def __init__(self, key: str, value: str, origin: Origin) -> None:
        _set(self, "key", key)
        _set(self, "value", value)
        _set(self, "origin", origin)

    @property
    def text(self) -> str:
        return f"{self.key}={self.value}"


class Setting(_Record):
    """A single-valued key's effective value, and where it came from (``None`` = default)."""

    __slots__ = ("origin", "value")
    _fields = ("value", "origin")
    value: Any
    origin: Origin | None

    def __init__(self, value: Any, origin: Origin | None = None) -> None:
        _set(self, "value", value)
        _set(self, "origin", origin)


class NetRule(_Record):
    """``net=ACTION|PROTO|HOST|PORTS|DIR`` (SPEC §2.4).

    ``host`` is ``*``, an IP address, a CIDR (normalised, e.g. ``10.0.0.0/8``) or a lower-case
    host name (``is_name``). ``ports`` is ``None`` for ``*``, else inclusive ranges.
    """

    __slots__ = ("action", "direction", "host", "is_name", "origin", "ports", "proto", "text")
    _fields = ("action", "proto", "host", "ports", "direction", "origin", "text", "is_name")
    action: Action
    proto: Proto
    host: str
    ports: tuple[tuple[int, int], ...] | None
    direction: Direction
    origin: Origin
    text: str  # the whole rule as written, "net=DENY|*|10.0.0.0/8|*|OUT"
    is_name: bool

    def __init__(
        self,
        action: Action,
        proto: Proto,
        host: str,
        ports: tuple[tuple[int, int], ...] | None,
        direction: Direction,
        origin: Origin,
        text: str,
        is_name: bool = False,
    ) -> None:
        _set(self, "action", action)
        _set(self, "proto", proto)
        _set(self, "host", host)
        _set(self, "ports", ports)
        _set(self, "direction", direction)
        _set(self, "origin", origin)
        _set(self, "text", text)
        _set(self, "is_name", is_name)

    def port_matches(self, port: int) -> bool:
        return self.ports is None or any(lo <= port <= hi for lo, hi in self.ports)


class ApiRule(_Record):
    """``python-api=ALLOW:target`` or ``DENY:target``: a category, a dotted function or ``*``."""

    __slots__ = ("action", "origin", "target")
    _fields = ("action", "target", "origin")
    action: Action
    target: str
    origin: Origin

    def __init__(self, action: Action, target: str, origin: Origin) -> None:
        _set(self, "action", action)
        _set(self, "target", target)
        _set(self, "origin", origin)

    @property
    def text(self) -> str:
        return f"python-api={self.action}:{self.target}"

    @property
    def is_category(self) -> bool:
        return self.target in API_CATEGORIES


class EnvRule(_Record):
    """``env=NAME=TEMPLATE``. ``name`` may hold ``*`` (a pattern such as ``PAT_*``).

    ``template`` is the value as written, before host-variable expansion (``${NAME}``,
    ``${NAME:-default}``, ``${PAT_*}``, quotes or a literal): ``decide.build_environment``
    resolves it against the host environment when it builds the child's environment.
    """

    __slots__ = ("name", "origin", "template")
    _fields = ("name", "template", "origin")
    name: str
    template: str
    origin: Origin

    def __init__(self, name: str, template: str, origin: Origin) -> None:
        _set(self, "name", name)
        _set(self, "template", template)
        _set(self, "origin", origin)

    @property
    def is_pattern(self) -> bool:
        return "*" in self.name

    @property
    def text(self) -> str:
        return f"env={self.name}={self.template}"


class PathRule(_Record):
    """An ``expose-ro``/``expose-rw`` path (absolute, ``~`` and ``./`` expanded, normalised;
    symlinks resolved) or an ``ignore`` glob (a bare name glob as written, or an absolute
    anchored glob), with the value as written for messages."""

    __slots__ = ("key", "origin", "path", "written")
    _fields = ("key", "path", "origin", "written")
    key: str
    path: str
    origin: Origin
    written: str  # the value as it appeared in the file, for messages

    def __init__(self, key: str, path: str, origin: Origin, written: str = "") -> None:
        _set(self, "key", key)
        _set(self, "path", path)
        _set(self, "origin", origin)
        _set(self, "written", written)

    @property
    def text(self) -> str:
        return f"{self.key}={self.written or self.path}"


class NameRule(_Record):
    """A ``python-import`` name (one per comma-separated item), an ``unenv`` name/pattern or
    an ``acknowledge`` limit id."""

    __slots__ = ("key", "name", "origin")
    _fields = ("key", "name", "origin")
    key: str
    name: str
    origin: Origin

    def __init__(self, key: str, name: str, origin: Origin) -> None:
        _set(self, "key", key)
        _set(self, "name", name)
        _set(self, "origin", origin)

    @property
    def text(self) -> str:
        return f"{self.key}={self.name}"


class SecretRule(_Record):
    """``secret=NAME|HOST[,HOST]|HEADER`` (SPEC §2.2, docs/rules.md): the program sees ``NAME``
    as a placeholder; the edge proxy puts the real value (python-sb's own ``NAME``) in place
    of the placeholder in the ``HEADER`` of requests to those hosts only."""

    __slots__ = ("header", "hosts", "name", "origin", "text")
    _fields = ("name", "hosts", "header", "origin", "text")
    name: str
    hosts: tuple[str, ...]
    header: str
    origin: Origin
    text: str

    def __init__(
        self, name: str, hosts: tuple[str, ...], header: str, origin: Origin, text: str
    ) -> None:
        _set(self, "name", name)
        _set(self, "hosts", hosts)
        _set(self, "header", header)
        _set(self, "origin", origin)
        _set(self, "text", text)


class IncludeInfo(_Record):
    """An ``include "PATH"`` directive: where it was written and what it resolved to.

    ``status``: ``loaded``; ``missing`` (skipped silently); ``cycle`` (already loaded: a cycle
    or a second include of the same file).
    """

    __slots__ = ("origin", "resolved", "status", "written")
    _fields = ("written", "resolved", "origin", "status")
    written: str
    resolved: str
    origin: Origin
    status: Literal["loaded", "missing", "cycle"]

    def __init__(
        self,
        written: str,
        resolved: str,
        origin: Origin,
        status: Literal["loaded", "missing", "cycle"],
    ) -> None:
        _set(self, "written", written)
        _set(self, "resolved", resolved)
        _set(self, "origin", origin)
        _set(self, "status", status)


#: Policy fields and their defaults, in constructor order (tuples are immutable, so shared).
_POLICY_DEFAULTS: tuple[tuple[str, Any], ...] = (
    ("py_sandbox", Setting(True)),
    ("os_sandbox", Setting("subprocess")),
    ("learn", Setting(None)),  # str path, or None
    ("lock", None),  # the ``learn=false`` line that locks the configuration
    ("env", ()),
    ("unenv", ()),
    ("expose_ro", ()),
    ("expose_rw", ()),
    ("ignore", ()),
    ("python_import", ()),
    ("python_api", ()),
    ("net", ()),
    ("secrets", ()),  # secret= lines (SecretRule)
    ("eval_rules", ()),  # every eval-* line; evalguard interprets them
    ("acknowledge", ()),  # announced limits not said at start (ids of providers/limits.py)
    ("provider_params", ()),  # "<provider>.<param>" lines
    ("rule_files", ()),  # every loaded rule file (absolute), protected from writes
    ("main_file", None),  # the rule file that was located (may not exist: learning)
    ("includes", ()),
    ("lines", ()),  # every rule line, in load order, for --explain
    ("warnings", ()),
)


#: The fields of a :class:`Policy` that hold rules, each rule with its :class:`Origin`: what
#: code that merges or filters a policy's rules by origin walks (the kernel's added rules,
#: learning's "which rules are this file's own"). One list, so that a new rule key cannot be
#: merged by one of them and silently dropped by another.
RULE_FIELDS: tuple[str, ...] = (
    "env",
    "unenv",
    "expose_ro",
    "expose_rw",
    "ignore",
    "python_import",
    "python_api",
    "net",
    "secrets",
    "eval_rules",
    "acknowledge",
    "provider_params",
)


class Policy(_Record):
    """The effective rules of one run. Immutable; build it with ``pysandboxes.policy.load_policy``.

    List keys are tuples of typed rules, in file order (order never changes a decision).
    A hand-written record, like the rule classes, so that the start-up path does not import
    ``dataclasses``; fields are keyword arguments with the defaults of ``_POLICY_DEFAULTS``.
    """

    __slots__ = tuple(sorted(name for name, _ in _POLICY_DEFAULTS))
    _fields = tuple(name for name, _ in _POLICY_DEFAULTS)

    py_sandbox: Setting
    os_sandbox: Setting
    learn: Setting
    lock: Origin | None
    env: tuple[EnvRule, ...]
    unenv: tuple[NameRule, ...]
    expose_ro: tuple[PathRule, ...]
    expose_rw: tuple[PathRule, ...]
    ignore: tuple[PathRule, ...]
    python_import: tuple[NameRule, ...]
    python_api: tuple[ApiRule, ...]
    net: tuple[NetRule, ...]
    secrets: tuple[SecretRule, ...]
    eval_rules: tuple[RuleLine, ...]
    acknowledge: tuple[NameRule, ...]
    provider_params: tuple[RuleLine, ...]
    rule_files: tuple[str, ...]
    main_file: str | None
    includes: tuple[IncludeInfo, ...]
    lines: tuple[RuleLine, ...]
    warnings: tuple[str, ...]

    def __init__(self, **values: Any) -> None:
        unknown = set(values) - set(self._fields)
        if unknown:
            raise TypeError(f"Policy() got unexpected fields: {', '.join(sorted(unknown))}")
        for name, default in _POLICY_DEFAULTS:
            _set(self, name, values.get(name, default))

    # -- convenience ---------------------------------------------------------------------------

    @property
    def locked(self) -> bool:
        return self.lock is not None

    def provider_param(self, provider: str, name: str) -> RuleLine | None:
        key = f"{provider}.{name}"
        found = None
        for line in self.provider_params:
            if line.key == key:
                found = line
        return found

    def imports_all(self) -> bool:
        return any(rule.name == "*" for rule in self.python_import)

    def replace(self, **changes: Any) -> Policy:
        """A copy with some fields changed."""

        return _Record.replace(self, **changes)

    # -- wire format ---------------------------------------------------------------------------

    def to_data(self) -> dict[str, Any]:
        """The policy as plain data: dicts, lists, ``str``, ``int``, ``bool`` and ``None``.

        What crosses to the child (``marshal``-encoded, see ``pysandboxes.launch.wire``) and
        what :meth:`to_json` writes. Never a pickle: decoding runs no code.
        """

        data: dict[str, Any] = _encode(self)
        return data

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Policy:
        """Inverse of :meth:`to_data`."""

        return _decode_policy(data)

    def to_json(self) -> str:
        import json  # not on the start-up path: json pulls re (several milliseconds)

        return json.dumps(self.to_data(), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Policy:
        import json

        return cls.from_data(json.loads(text))


# -- plain-data encoding ---------------------------------------------------------------------------
# Each record is encoded as a dict of its fields; tuples become lists. Decoding is driven by
# the field types declared above, so adding a field needs no change here.


def _encode(value: Any) -> Any:
    if isinstance(value, _Record):
        return {name: _encode(getattr(value, name)) for name in value._fields}
    if isinstance(value, (tuple, list)):
        return [_encode(v) for v in value]
    return value


def _origin(data: Any) -> Origin | None:
    return None if data is None else Origin(data["file"], data["line"], data["learned"])


def _ports(data: Any) -> tuple[tuple[int, int], ...] | None:
    return None if data is None else tuple((int(a), int(b)) for a, b in data)


def _setting(data: dict[str, Any]) -> Setting:
    return Setting(data["value"], _origin(data["origin"]))


_ROW_TYPES: dict[str, type] = {
    "env": EnvRule,
    "unenv": NameRule,
    "expose_ro": PathRule,
    "expose_rw": PathRule,
    "ignore": PathRule,
    "python_import": NameRule,
    "python_api": ApiRule,
    "net": NetRule,
    "secrets": SecretRule,
    "eval_rules": RuleLine,
    "acknowledge": NameRule,
    "provider_params": RuleLine,
    "includes": IncludeInfo,
    "lines": RuleLine,
}


def _decode_row(kind: type, data: dict[str, Any]) -> Any:
    kwargs = dict(data)
    kwargs["origin"] = _origin(kwargs["origin"])
    if kind is NetRule:
        kwargs["ports"] = _ports(kwargs["ports"])
    return kind(**kwargs)


def _decode_policy(data: dict[str, Any]) -> Policy:
    kwargs: dict[str, Any] = {}
    for name, raw in data.items():
        if name in ("py_sandbox", "os_sandbox", "learn"):
            kwargs[name] = _setting(raw)
        elif name == "lock":
            kwargs[name] = _origin(raw)
        elif name in _ROW_TYPES:
            kwargs[name] = tuple(_decode_row(_ROW_TYPES[name], row) for row in raw)
        elif name in ("rule_files", "warnings"):
            kwargs[name] = tuple(raw)
        else:
            kwargs[name] = raw
    return Policy(**kwargs)
