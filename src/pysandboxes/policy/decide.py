"""The one implementation of the precedence rules (SPEC §2.4, §2.5), over a :class:`Policy`.

The guard calls these on hot paths (every ``open``, ``connect``, sensitive call), so each policy
is compiled once, on first use of each area, into lookup tables kept in a module cache keyed by
the policy's identity (the entry holds the policy itself, so an id is never reused while its
entry lives). The functions stay pure: same policy and arguments, same answer.

``ipaddress`` and ``re`` are imported only when a policy needs them.
"""

from __future__ import annotations

from pysandboxes.errors import ConfigError, ConfigProblem

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any, Literal, TypeAlias

    from pysandboxes.policy.model import ApiRule, EnvRule, NetRule, Policy

    PathAccess: TypeAlias = Literal["rw", "ro", "ignored", None]

__all__ = [
    "Decider",
    "api_decision",
    "build_environment",
    "compile_policy",
    "import_allowed",
    "net_decision",
    "path_access",
    "script_readable",
]


_CACHE: dict[int, tuple[Policy, Decider]] = {}
_PATH_CACHE_LIMIT = 4096


def _compiled(policy: Policy) -> Decider:
    entry = _CACHE.get(id(policy))
    if entry is not None and entry[0] is policy:
        return entry[1]
    compiled = Decider(policy)
    _CACHE[id(policy)] = (policy, compiled)
    return compiled


def compile_policy(policy: Policy, flavour: str | None = None) -> Decider:
    """A private :class:`Decider` for ``policy``, not shared through the module cache.
    ``flavour``: ``"posix"`` or ``"windows"`` paths (default: this platform's, from
    ``platform_caps``); the tests judge Windows rules on Linux with it.

    The guard keeps its own in the audit hook's closure, so that its tables are reachable by no
    module global (DESIGN decision 2); the module-level functions use a shared cache.
    """

    return Decider(policy, flavour)


class Decider:
    """The decisions of one policy, with its lookup tables (each built on first use).

    Its methods are the module-level functions without the ``policy`` argument:
    ``net``, ``api``, ``import_allowed``, ``path``, ``environment``.
    """

    __slots__ = (
        "_api",
        "_env",
        "_flavour",
        "_imports",
        "_net",
        "_paths",
        "path_cache",
        "policy",
    )

    def __init__(self, policy: Policy, flavour: str | None = None) -> None:
        self.policy = policy
        self._flavour = flavour  # of the paths (None: this platform's, pathforms.py)
        self._net: Callable[[str, Any, Any, Any, str], tuple[bool, NetRule | None]] | None = None
        self._api: dict[str, tuple[ApiRule | None, ApiRule | None]] | None = None
        self._imports: tuple[bool, frozenset[str]] | None = None
        self._paths: _PathTables | None = None
        self._env: _EnvTables | None = None
        self.path_cache: dict[str, PathAccess] = {}

    @property
    def net_match(self) -> Callable[[str, Any, Any, Any, str], tuple[bool, NetRule | None]]:
        """The ``net=`` rules' matcher (``policy/precedence.py``: the guard's own rows)."""

        if self._net is None:
            from pysandboxes.policy import precedence

            rules = self.policy.net
            rows = precedence.net_rows(rules)
            answers = tuple(((not row[0]), rules[row[11]]) for row in rows)
            self._net = precedence.make_net_matcher(rows, answers, (False, None))
        return self._net

    @property
    def api_table(self) -> dict[str, tuple[ApiRule | None, ApiRule | None]]:
        if self._api is None:
            table: dict[str, tuple[ApiRule | None, ApiRule | None]] = {}
            for rule in self.policy.python_api:
                deny, allow = table.get(rule.target, (None, None))
                if rule.action == "DENY":
                    deny = deny or rule
                else:
                    allow = allow or rule
                table[rule.target] = (deny, allow)
            self._api = table
        return self._api

    @property
    def imports(self) -> tuple[bool, frozenset[str]]:
        if self._imports is None:
            names = frozenset(r.name for r in self.policy.python_import)
            self._imports = ("*" in names, names)
        return self._imports

    @property
    def paths(self) -> _PathTables:
        if self._paths is None:
            self._paths = _PathTables(self.policy, self._flavour)
        return self._paths

    @property
    def env(self) -> _EnvTables:
        if self._env is None:
            self._env = _EnvTables(self.policy)
        return self._env

    def net(
        self, proto: str, host: str | None, ip: str, port: int, direction: str
    ) -> tuple[bool, NetRule | None]:
        return _net(self, proto, host, ip, port, direction)

    def api(self, function: str, category: str) -> tuple[bool, ApiRule | None]:
        return _api(self, function, category)

    def import_allowed(self, top_level_name: str) -> bool:
        everything, names = self.imports
        return everything or top_level_name in names

    def path(self, resolved_path: str) -> PathAccess:
        return _path(self, resolved_path)

    def environment(self, host_env: Mapping[str, str]) -> dict[str, str]:
        return _environment(self, host_env)


# -- network ------------------------------------------------------------------------------------


def _ip_key(ip: str) -> tuple[int, int] | None:
    """``(version, integer)`` of an address (IPv4-mapped IPv6 as IPv4), ``None`` if not one."""

    import ipaddress

    try:
        addr = ipaddress.ip_address(ip.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    if addr.version == 6 and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return addr.version, int(addr)


def net_decision(
    policy: Policy,
    proto: str,
    host: str | None,
    ip: str,
    port: int,
    direction: str,
    own_sockets: Iterable[tuple[str, str, int] | tuple[str, str, int, bool]] = (),
) -> tuple[bool, NetRule | None]:
    """Whether a connection (``OUT``) or a bind/listen/accept (``IN``) is allowed.

    A matching DENY wins over any ALLOW, whichever file it comes from: ``(False, deny_rule)``.
    Else a matching ALLOW: ``(True, allow_rule)``. Else ``(False, None)``. ``host`` is the name
    the program asked for (``None`` for a bare address): host-name rules match it, IP and CIDR
    rules match ``ip``. ``ip=""`` means the address is not known yet (a check before resolving
    a name): only ``*`` and host-name rules can match then, and the caller checks again with the
    address. An ``ip`` that is not an address is refused.

    The program's own server (SPEC §2.4, docs/network.md): ``own_sockets`` are the
    ``(proto, local ip, local port)`` of the program's sockets that are bound (TCP: listening)
    and hold that address alone (the guard checks ``SO_REUSEPORT``, ``SO_ACCEPTCONN``,
    ``SO_REUSEADDR``), with a fourth item ``True`` for a dual-stack ``::`` socket (no
    ``IPV6_V6ONLY``). An ``OUT`` to a loopback address that no rule matches, on the port of
    such a socket whose local address it reaches (the same address, the wildcard of its
    family, or a dual-stack ``::`` for IPv4), is allowed when an ``IN`` rule lets the program
    bind that socket (its port, or port 0: a port the kernel chose): ``(True, in_rule)``. A
    DENY still wins.
    """

    decider = _compiled(policy)
    allowed, rule = _net(decider, proto, host, ip, port, direction)
    if allowed or rule is not None or direction.upper() != "OUT" or not ip:
        return allowed, rule
    target = _ip_key(ip)
    if target is None:
        return allowed, rule
    if target[1] == 0:  # Linux connects to the unspecified address on loopback
        target = (4, 0x7F000001) if target[0] == 4 else (6, 1)
    if not _is_loopback_key(target):
        return allowed, rule
    for own in own_sockets:
        own_proto, local_ip, local_port = own[0], own[1], own[2]
        dual_stack = len(own) > 3 and bool(own[3])
        local = _ip_key(local_ip)
        if own_proto.upper() != proto.upper() or local_port != port or local is None:
            continue
        wildcard = local[1] == 0 and (
            local[0] == target[0] or (dual_stack and local[0] == 6 and target[0] == 4)
        )
        if not (local == target or wildcard):
            continue
        for asked in (port, 0):
            granted, in_rule = _net(decider, proto, None, local_ip, asked, "IN")
            if granted:
                return True, in_rule
    return allowed, rule


def _is_loopback_key(key: tuple[int, int]) -> bool:
    return key[1] >> 24 == 127 if key[0] == 4 else key[1] == 1


def _net(
    decider: Decider, proto: str, host: str | None, ip: str, port: int, direction: str
) -> tuple[bool, NetRule | None]:
    names = (host.lower().removesuffix("."),) if host else ()
    key = None
    if ip:
        key = _ip_key(ip)
        if key is None:
            return False, None
    return decider.net_match(proto.upper(), names, key, port, direction.upper())


# -- python-api and imports ------------------------------------------------------------------------


def api_decision(policy: Policy, function: str, category: str) -> tuple[bool, ApiRule | None]:
    """Whether ``function`` (of ``category``) may be called (SPEC §2.5).

    The most specific level that has a rule decides: the function, then its category, then
    ``*``; at one level DENY wins. ``(False, None)``: no rule allows it (denied by default).
    """

    return _api(_compiled(policy), function, category)


def _api(decider: Decider, function: str, category: str) -> tuple[bool, ApiRule | None]:
    table = decider.api_table
    for target in (function, category, "*"):
        found = table.get(target)
        if found is not None:
            deny, allow = found
            if deny is not None:
                return False, deny
            return True, allow
    return False, None


def import_allowed(policy: Policy, top_level_name: str) -> bool:
    """Whether ``python-import`` grants the top-level module ``top_level_name`` (or ``*``)."""

    return _compiled(policy).import_allowed(top_level_name)


# -- paths --------------------------------------------------------------------------------------


def glob_regex(pattern: str, sep: str = "/") -> str:
    """A regular expression for a path glob: ``*`` and ``?`` stay within one path component
    (``sep`` separates components: ``\\`` for Windows paths, ``policy/pathforms.py``),
    ``**`` crosses components, ``[...]`` is a character class (``[!...]`` negated).

    Where the file system usually ignores case (macOS, Windows: ``platform_caps``), the
    expression does too: ``ignore=.env`` must also hide ``.ENV``, the same file there. (Exposed
    prefixes stay case-sensitive: another spelling of an exposed path is refused, never
    granted.)"""

    import re

    one = "[^/]" if sep == "/" else "[^\\\\]"
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                out.append(".*")
                i += 2
                continue
            out.append(one + "*")
        elif c == "?":
            out.append(one)
        elif c == "[":
            j = i + 1
            if pattern.startswith("!", j):
                j += 1
            if pattern.startswith("]", j):  # a "]" first in the class is literal
                j += 1
            end = pattern.find("]", j)
            if end < 0:  # no class: a literal "["
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                body = "".join("\\" + ch if ch in "\\^[]" else ch for ch in body)
                out.append(f"[{'^' if negate else ''}{body}]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    if _case_insensitive_paths():
        return "(?i:" + "".join(out) + ")"
    return "".join(out)


def _case_insensitive_paths() -> bool:
    """``platform_caps.CAPS.case_insensitive_paths`` when that module is loaded (the launcher
    loads it under the test switch; the child before arming, with the parent's profile),
    else the platform's own answer. Never an import here: this runs under the armed guard,
    where loading a module is the program's business."""

    import sys

    caps = getattr(sys.modules.get("pysandboxes.platform_caps"), "CAPS", None)
    if caps is not None:
        return bool(caps.case_insensitive_paths)
    import os

    return os.name != "posix" or sys.platform == "darwin"


def _path_flavour() -> str:
    """``platform_caps.CAPS.path_flavour`` when that module is loaded, else the platform's
    own (never an import here, as :func:`_case_insensitive_paths`)."""

    import sys

    caps = getattr(sys.modules.get("pysandboxes.platform_caps"), "CAPS", None)
    if caps is not None:
        return str(caps.path_flavour)
    import os

    return "posix" if os.name == "posix" else "windows"


class _PathTables:
    """The path rules of one policy as one matcher (``policy/precedence.py``, the guard's own
    precedence). ``flavour`` ``"windows"``: the paths are Windows paths
    (``policy/pathforms.py``, normalised by the loader), separated by ``\\`` and compared
    without regard to case (prefixes and ``ignore=`` globs alike)."""

    __slots__ = ("match", "windows")

    def __init__(self, policy: Policy, flavour: str | None = None) -> None:
        from pysandboxes.policy import precedence

        self.windows = windows = (flavour or _path_flavour()) == "windows"
        names, anchored = precedence.ignore_matchers((r.path for r in policy.ignore), windows)
        granted = [(r.path, "ro") for r in policy.expose_ro] + [
            (r.path, "rw") for r in policy.expose_rw
        ]
        rows = [(*precedence.exposure_row(path, windows), kind, None) for path, kind in granted]
        ordered = precedence.order_rows(rows, lambda row: row[0], lambda row: row[2] == "rw")
        self.match: Callable[[str], tuple[PathAccess, None]] = precedence.make_path_matcher(
            ordered, names, anchored, windows, None, "ignored"
        )

    def decide(self, path: str) -> PathAccess:
        return self.match(path)[0]


def path_access(policy: Policy, resolved_path: str) -> PathAccess:
    """What the rules grant on an absolute, resolved path (SPEC §2.5).

    ``"ignored"`` when an ``ignore=`` glob matches the path or one of its parents (it beats every
    exposure); else the kind of the longest exposed prefix, ``"rw"`` or ``"ro"`` (at equal length
    ``rw``); else ``None``. The default grants (interpreter, certificates, temp dir, ``/dev``)
    are the guard's business.
    """

    return _path(_compiled(policy), resolved_path)


def script_readable(policy: Policy, script: str, read_roots: tuple[str, ...]) -> bool:
    """Whether the rules let a sandbox read the script ``script`` (SPEC 5.2, issue 11 point 8:
    one behaviour under every provider): an exposure, or a default grant (the interpreter's
    installation, ``read_roots``), and not hidden by ``ignore=``. ``providers/limits.
    check_script`` words the refusal; the start asks here first, so that a run whose script is
    readable never loads the limits' table."""

    import os

    from pysandboxes.policy import defaults

    real = os.path.realpath(script)

    def under(path: str, root: str) -> bool:
        return path == root or root == "/" or path.startswith(root.rstrip("/") + "/")

    if policy.ignore and path_access(policy, real) == "ignored":  # compiles globs: only then
        return False
    exposures = [rule.path for rule in (*policy.expose_ro, *policy.expose_rw)]
    defaults_ro = [*read_roots, *defaults.python_layer_paths(defaults.RO)]
    return any(
        root and (under(real, root) or under(real, os.path.realpath(root)))
        for root in (*exposures, *defaults_ro)
    )


def _path(compiled: Decider, resolved_path: str) -> PathAccess:
    cache = compiled.path_cache
    try:
        return cache[resolved_path]
    except KeyError:
        pass
    result = compiled.paths.decide(resolved_path)
    if len(cache) >= _PATH_CACHE_LIMIT:
        cache.clear()
    cache[resolved_path] = result
    return result


# -- environment --------------------------------------------------------------------------------


class _EnvTables:
    __slots__ = ("exact", "patterns", "unenv_exact", "unenv_match")

    def __init__(self, policy: Policy) -> None:
        self.exact: dict[str, EnvRule] = {}
        for rule in policy.env:
            if not rule.is_pattern:
                self.exact.setdefault(rule.name, rule)
        self.unenv_exact = frozenset(r.name for r in policy.unenv if "*" not in r.name)
        self.patterns: list[tuple[Callable[[str], Any], int, EnvRule]] = []
        self.unenv_match: Callable[[str], Any] | None = None
        patterns = [r for r in policy.env if r.is_pattern]
        unenv_patterns = [r.name for r in policy.unenv if "*" in r.name]
        if not patterns and not unenv_patterns:
            return  # no pattern: no ``re`` (it costs every run's start-up several ms)
        import re

        self.patterns = [
            (_star_regex(re, r.name), len(r.name) - r.name.count("*"), r) for r in patterns
        ]
        if unenv_patterns:
            joined = "|".join(_star_pattern(re, name) for name in unenv_patterns)
            self.unenv_match = re.compile(joined, re.S).fullmatch

    def hidden(self, name: str) -> bool:
        return name in self.unenv_exact or (
            self.unenv_match is not None and self.unenv_match(name) is not None
        )


def _star_pattern(re: Any, name: str) -> str:
    return ".*".join(re.escape(piece) for piece in name.split("*"))


def _star_regex(re: Any, name: str) -> Callable[[str], Any]:
    return re.compile(_star_pattern(re, name), re.S).fullmatch  # type: ignore[no-any-return]


def _template_parts(template: str) -> tuple[Any, ...]:
    from pysandboxes.policy.syntax import scan_value

    return _parts_cache(template, scan_value)


_PARTS: dict[str, tuple[Any, ...]] = {}


def _parts_cache(template: str, scan: Any) -> tuple[Any, ...]:
    found = _PARTS.get(template)
    if found is None:
        found = scan(template, comments=False, var_check=_any_var)[0]
        _PARTS[template] = found
    return found


def _any_var(name: str) -> str | None:
    return None if name else "empty variable name"


def _resolve(rule: EnvRule, name: str, host_env: Mapping[str, str]) -> str | None:
    from pysandboxes.policy.syntax import Var, expand

    try:
        parts = _template_parts(rule.template)
    except ValueError as exc:  # a policy built by hand with a template the loader would refuse
        problem = ConfigProblem(str(rule.origin), f"{rule.text}: {exc}", rule.origin.sort_key)
        raise ConfigError([problem]) from None
    if len(parts) == 1 and isinstance(parts[0], Var) and parts[0].default is None:
        ref = name if parts[0].name == rule.name else parts[0].name
        return host_env.get(ref)  # only ${X}: X unset on the host → not passed at all

    def lookup(var: str) -> str | None:
        return host_env.get(name if var == rule.name else var)

    return expand(parts, lookup)


def build_environment(policy: Policy, host_env: Mapping[str, str]) -> dict[str, str]:
    """The environment the sandboxed program gets: only what ``env=`` grants (SPEC §2.5).

    An exact name beats a pattern; among patterns, the one with more fixed characters wins; two
    equally specific patterns giving different values raise :class:`ConfigError` (the loader
    already refuses the ones it can see). ``unenv`` removes a name whatever else says. A value
    that is only ``${X}`` passes nothing when ``X`` is unset on the host; any other template
    expands an unset variable to ``""``. In ``PAT_*=${PAT_*}`` the reference means the host's
    value of each matching name. The launcher adds what it owns (``TMPDIR``) on top.
    """

    return _environment(_compiled(policy), host_env)


def _environment(decider: Decider, host_env: Mapping[str, str]) -> dict[str, str]:
    tables = decider.env
    out: dict[str, str] = {}
    for name, rule in tables.exact.items():
        value = _resolve(rule, name, host_env)
        if value is not None:
            out[name] = value
    if tables.patterns:
        for name in host_env:
            if name in tables.exact:
                continue
            best = -1
            chosen: list[tuple[EnvRule, str]] = []
            for match, fixed, rule in tables.patterns:
                if fixed < best or match(name) is None:
                    continue
                value = _resolve(rule, name, host_env)
                if value is None:
                    continue
                if fixed > best:
                    best, chosen = fixed, []
                chosen.append((rule, value))
            if not chosen:
                continue
            values = {value for _rule, value in chosen}
            if len(values) > 1:
                raise ConfigError(
                    [
                        ConfigProblem(
                            str(rule.origin),
                            f"{rule.text}: equally specific patterns give {name} different values",
                            rule.origin.sort_key,
                        )
                        for rule, _value in chosen
                    ]
                )
            out[name] = chosen[0][1]
    if tables.unenv_exact or tables.unenv_match is not None:
        for name in [n for n in out if tables.hidden(n)]:
            del out[name]
    return out
