"""``os-sandbox=landlock``: Landlock and seccomp applied by ``python-sb`` to itself before exec.

No extra process: :meth:`LandlockProvider.prepare` computes a :class:`Plan` from the policy and
the run (pure, testable), and returns one ``pre_exec`` callable that the launcher runs in its own
process right before ``execve`` of the interpreter. That callable creates the ruleset, adds a rule
per granted path and TCP port, drops the capabilities a root caller does not need, sets
``no_new_privs``, restricts the process and loads the seccomp filter
(:mod:`pysandboxes.providers.seccomp`). Landlock domains and seccomp filters survive exec and are
inherited by every child process, so the interpreter, its children and any native code run under
the same rules.

ABI negotiation is best effort, as in the kernel's sample sandboxer: each right exists from some
ABI version on, and the ruleset handles only what the running kernel knows
(:func:`rights_for_abi`). What Landlock cannot express (host parts and DENY of ``net=``, UDP,
``ignore=``, protection of rule files inside writable exposures) is enforced by the Python layer
when ``py-sandbox=true``; with ``py-sandbox=false`` it is either said at start (``warnings``) or,
for network rules the kernel could only over-grant, refused (:class:`ConfigError`).
"""

from __future__ import annotations

import os
import sys

from pysandboxes.errors import ConfigError, ProviderUnavailableError
from pysandboxes.policy import defaults as _defaults
from pysandboxes.policy.model import NetRule, Policy, display_path
from pysandboxes.policy.netrules import ephemeral_port_range, is_loopback_bind, is_wildcard_bind
from pysandboxes.providers import _linux, limits
from pysandboxes.providers.base import Availability, Launch, Prepared, Provider
from pysandboxes.record import Record

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

TYPE_CHECKING = False  # as typing.TYPE_CHECKING: typing costs start-up time (DESIGN 7)
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any, Final

    from pysandboxes.providers.edge_proxy import HostEdge
    from pysandboxes.providers.listen_guard import ListenGuard

# -- rights (linux/landlock.h) --------------------------------------------------------------------

FS_EXECUTE: Final = 1 << 0
FS_WRITE_FILE: Final = 1 << 1
FS_READ_FILE: Final = 1 << 2
FS_READ_DIR: Final = 1 << 3
FS_REMOVE_DIR: Final = 1 << 4
FS_REMOVE_FILE: Final = 1 << 5
FS_MAKE_CHAR: Final = 1 << 6
FS_MAKE_DIR: Final = 1 << 7
FS_MAKE_REG: Final = 1 << 8
FS_MAKE_SOCK: Final = 1 << 9
FS_MAKE_FIFO: Final = 1 << 10
FS_MAKE_BLOCK: Final = 1 << 11
FS_MAKE_SYM: Final = 1 << 12
FS_REFER: Final = 1 << 13  # ABI 2
FS_TRUNCATE: Final = 1 << 14  # ABI 3
FS_IOCTL_DEV: Final = 1 << 15  # ABI 5
NET_BIND_TCP: Final = 1 << 0  # ABI 4
NET_CONNECT_TCP: Final = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET: Final = 1 << 0  # ABI 6
SCOPE_SIGNAL: Final = 1 << 1  # ABI 6
RESTRICT_SELF_LOG_NEW_EXEC_ON: Final = 1 << 1  # ABI 7

#: File-system rights that first appeared in each ABI version.
_FS_NEW_IN_ABI: Final[dict[int, int]] = {
    1: (1 << 13) - 1,
    2: FS_REFER,
    3: FS_TRUNCATE,
    5: FS_IOCTL_DEV,
}
#: Rights that apply to a file (the kernel refuses the others on a non-directory).
FS_FILE_RIGHTS: Final = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV

#: ``expose-ro``: read files, list directories, run programs.
RIGHTS_RO: Final = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
#: ``expose-rw``: the above and the write family. Device nodes cannot be created.
RIGHTS_RW: Final = (
    RIGHTS_RO
    | FS_WRITE_FILE
    | FS_REMOVE_DIR
    | FS_REMOVE_FILE
    | FS_MAKE_DIR
    | FS_MAKE_REG
    | FS_MAKE_SOCK
    | FS_MAKE_FIFO
    | FS_MAKE_SYM
    | FS_REFER
    | FS_TRUNCATE
    | FS_IOCTL_DEV
)

#: Capabilities kept by a privileged caller (root): file ownership and permission overrides,
#: still bounded by the Landlock file rules, and binding ports below 1024, still bounded by the
#: port rules. Every other capability (admin, network admin, raw sockets, kill, setuid...) goes,
#: CAP_FSETID too: with it a write into a set-user-ID file keeps the bit (issue 23, class 6).
KEPT_CAPABILITIES: Final = (
    (1 << 0)  # CAP_CHOWN
    | (1 << 1)  # CAP_DAC_OVERRIDE
    | (1 << 2)  # CAP_DAC_READ_SEARCH
    | (1 << 3)  # CAP_FOWNER
    | (1 << 10)  # CAP_NET_BIND_SERVICE
)

_RULE_PATH_BENEATH: Final = 1
_RULE_NET_PORT: Final = 2
_CREATE_RULESET_VERSION: Final = 1 << 0


class Rights(Record):
    """What a ruleset handles (refuses unless a rule grants it) for one ABI version."""

    __slots__ = ("fs", "net", "scoped")
    _fields = __slots__  # (constructor order does not matter: built by keyword)
    fs: int
    net: int
    scoped: int

    def __init__(self, fs: int, net: int, scoped: int) -> None:
        self._init(fs=fs, net=net, scoped=scoped)


def rights_for_abi(abi: int) -> Rights:
    """The rights a kernel of Landlock ABI ``abi`` can enforce (0: none)."""

    fs = 0
    for version, rights in _FS_NEW_IN_ABI.items():
        if abi >= version:
            fs |= rights
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    return Rights(fs, net, scoped)


# -- probing --------------------------------------------------------------------------------------

_abi_cache: tuple[int, int] | None = None  # (abi, errno of the probe)


def _probe() -> tuple[int, int]:
    global _abi_cache
    if _abi_cache is None:
        if not _linux.supported():
            _abi_cache = (0, 0)
        else:
            try:
                abi = _linux.syscall("landlock_create_ruleset", None, 0, _CREATE_RULESET_VERSION)
                _abi_cache = (abi, 0)
            except OSError as exc:
                _abi_cache = (0, exc.errno or 0)
    return _abi_cache


def landlock_abi() -> int:
    """The running kernel's Landlock ABI version; 0 when Landlock cannot be used here. Cached."""

    return _probe()[0]


def _unavailable_reason(err: int) -> tuple[str, str]:
    import errno

    if not _linux.supported():
        return (
            f"the landlock provider supports x86_64 and aarch64, not {_linux.machine()}",
            "use os-sandbox=bwrap or os-sandbox=qemu on this machine",
        )
    from pysandboxes.providers import _container

    box = _container.cached()
    if err == errno.ENOSYS and box and box.seccomp == 2:
        # Podman's and containerd's profiles answer a system call they do not list with ENOSYS:
        # inside a container with a filter, "no Landlock" may be the profile speaking.
        return (
            "the Landlock system calls fail with ENOSYS: this kernel has no Landlock, or the "
            "container's seccomp profile does not list them",
            "upgrade the kernel, or allow the calls: " + _container.runtime_hint("seccomp"),
        )
    if err == errno.ENOSYS:
        return (
            "this kernel has no Landlock (Linux 5.13 or later built with "
            "CONFIG_SECURITY_LANDLOCK=y is needed; TCP rules need 6.7, scopes 6.12)",
            "upgrade the kernel, or use os-sandbox=bwrap",
        )
    if err == errno.EOPNOTSUPP:
        return (
            "Landlock is built into this kernel but not enabled at boot",
            "add landlock to the lsm= kernel boot parameter (for example "
            "lsm=landlock,lockdown,yama,integrity,apparmor,bpf) or to CONFIG_LSM, then reboot",
        )
    if err in (errno.EPERM, errno.EACCES):
        return (
            "the Landlock system calls are blocked by a seccomp filter around this process "
            "(a container runtime's profile?)",
            "allow landlock_create_ruleset, landlock_add_rule and landlock_restrict_self in the "
            "container's seccomp profile (Docker >= 23 and recent runc profiles allow them)"
            + (f"; {hint}" if (hint := _container.runtime_hint("seccomp")) else ""),
        )
    return (f"Landlock probe failed: {os.strerror(err)}", "use os-sandbox=bwrap")


# -- the plan -------------------------------------------------------------------------------------

#: The default grants, from the one list every enforcer uses (``policy/defaults.py``): the
#: certificate stores (not /etc/ssl/private), time-zone and MIME data, the name-service files,
#: the accounts libc reads for the process's own entry, the loader and shared libraries.
#: Missing ones are skipped. Not /etc or /usr wholesale.
SYSTEM_READ: Final[tuple[str, ...]] = tuple(
    path
    for path, access, _name in _defaults.landlock_paths()
    if access == _defaults.RO and not path.startswith("/dev/")
)
#: Devices, read and written (/dev/null, /dev/zero, /dev/full, /dev/urandom, /dev/random: all
#: read-write in the one list of defaults).
SYSTEM_DEVICES: Final[tuple[tuple[str, int], ...]] = tuple(
    (path, FS_READ_FILE | FS_WRITE_FILE if access == _defaults.RW else FS_READ_FILE)
    for path, access, _name in _defaults.landlock_paths()
    if path.startswith("/dev/")
)

PortSet = tuple[tuple[int, int], ...]  # sorted disjoint inclusive ranges; () = none
ALL_PORTS: Final[PortSet] = ((0, 65535),)


class PathGrant(Record):
    """A path and the rights granted beneath it; ``required`` paths must exist at apply time.

    ``follow``: a symbolic link at ``path`` is followed (the rule is put on its target). The
    entries enumerated to keep a read-only exposure out of a writable one are not followed: a
    link put there between the plan and its application grants nothing.
    """

    __slots__ = ("follow", "path", "required", "rights", "why")
    _fields = __slots__  # (constructor order does not matter: built by keyword)
    path: str
    rights: int
    why: str
    required: bool
    follow: bool

    def __init__(
        self, path: str, rights: int, why: str, required: bool = False, follow: bool = True
    ) -> None:
        self._init(path=path, rights=rights, why=why, required=required, follow=follow)


class Plan(Record):
    """Everything ``pre_exec`` will apply, computed from the policy and the run (no side effect).

    ``connect``/``bind`` are ``None`` when that TCP access is left unrestricted (an ``ALLOW`` of
    every port), else the granted ports. ``proc_self`` grants reading the process's own /proc
    entry, resolved at apply time (after a fork, it is the child's).
    """

    __slots__ = (
        "abi",
        "allow_udp",
        "allow_unix",
        "announced",
        "bind",
        "connect",
        "notices",
        "paths",
        "proc_self",
        "rights",
        "unenforced",
    )
    _fields = __slots__  # (constructor order does not matter: built by keyword)
    abi: int
    rights: Rights
    paths: tuple[PathGrant, ...]
    connect: PortSet | None
    bind: PortSet | None
    allow_udp: bool
    allow_unix: bool
    proc_self: bool
    #: What the kernel layer leaves to the Python layer (or unenforced when it is off).
    unenforced: tuple[str, ...]
    #: Announced limits that hold with the Python layer on too (said at every start).
    announced: tuple[str, ...]
    #: The sentences above that come from ``providers/limits.py``, with their keys.
    notices: tuple[limits.Notice, ...]

    def __init__(
        self,
        *,
        abi: int,
        rights: Rights,
        paths: tuple[PathGrant, ...],
        connect: PortSet | None,
        bind: PortSet | None,
        allow_udp: bool,
        allow_unix: bool,
        proc_self: bool = True,
        unenforced: tuple[str, ...] = (),
        announced: tuple[str, ...] = (),
        notices: tuple[limits.Notice, ...] = (),
    ) -> None:
        self._init(
            abi=abi,
            rights=rights,
            paths=paths,
            connect=connect,
            bind=bind,
            allow_udp=allow_udp,
            allow_unix=allow_unix,
            proc_self=proc_self,
            unenforced=unenforced,
            announced=announced,
            notices=notices,
        )

    def replace(self, **changes: object) -> Plan:
        """A copy with some fields changed."""

        values = {name: getattr(self, name) for name in self.__slots__}
        values.update(changes)
        return Plan(**values)  # type: ignore[arg-type]


# -- port sets ------------------------------------------------------------------------------------


def _normalise(ranges: Iterable[tuple[int, int]]) -> PortSet:
    merged: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return tuple((lo, hi) for lo, hi in merged)


def _subtract(ports: PortSet, removed: PortSet) -> PortSet:
    out: list[tuple[int, int]] = []
    for lo, hi in ports:
        start = lo
        for rlo, rhi in removed:
            if rhi < start or rlo > hi:
                continue
            if rlo > start:
                out.append((start, rlo - 1))
            start = max(start, rhi + 1)
        if start <= hi:
            out.append((start, hi))
    return _normalise(out)


def _intersect(a: PortSet, b: PortSet) -> PortSet:
    return _subtract(a, _subtract(a, b))


def _ports_of(rule: NetRule) -> PortSet:
    return ALL_PORTS if rule.ports is None else _normalise(rule.ports)


def format_ports(ports: PortSet) -> str:
    return ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in ports) or "none"


# -- network: from net= rules to Landlock port rules and seccomp socket gates ---------------------


def _covers(rule: NetRule, proto: str, direction: str) -> bool:
    return rule.proto in (proto, "*") and rule.direction in (direction, "*")


def _union(rules: Iterable[NetRule]) -> PortSet:
    ranges: list[tuple[int, int]] = []
    for rule in rules:
        ranges.extend(_ports_of(rule))
    return _normalise(ranges)


def _own_server_ports(policy: Policy) -> tuple[PortSet, bool]:
    """The TCP ports the program may connect to for its own server (SPEC §2.4: a loopback
    connection to a port an IN rule lets the program bind belongs to that IN grant), and
    whether a port-0 rule brought the kernel's ephemeral range in.

    From the ALLOW IN rules that name their ports and let the program bind on loopback (any
    host, the wildcard bind, or a loopback network): their ports, with port 0 (a port the
    kernel picks) read as the ephemeral range (``/proc/sys/net/ipv4/ip_local_port_range``).
    A rule for every port (``*``) brings nothing: it would open every port to every host."""

    ranges: list[tuple[int, int]] = []
    ephemeral = False
    for rule in policy.net:
        if rule.action != "ALLOW" or not _covers(rule, "TCP", "IN") or rule.ports is None:
            continue
        if not (rule.host == "*" or is_wildcard_bind(rule.host) or is_loopback_bind(rule.host)):
            continue
        for lo, hi in _normalise(rule.ports):
            if lo == 0:
                ephemeral = True
                ranges.append(ephemeral_port_range())
                lo = 1
            if lo <= hi:
                ranges.append((lo, hi))
    return _normalise(ranges), ephemeral


def _tcp_ports(
    policy: Policy,
    direction: str,
    python_layer: bool,
    problems: list[str],
    notes: list[limits.Notice],
    own: PortSet = (),
) -> PortSet:
    """The TCP ports Landlock grants for ``direction`` (OUT: connect, IN: bind); ``own``: the
    ports of the program's own server (:func:`_own_server_ports`), granted to connect on every
    host, as the ALLOW OUT rules to any host are (DENY rules subtract from them)."""

    rules = [r for r in policy.net if _covers(r, "TCP", direction)]

    def any_host(rule: NetRule) -> bool:
        # For IN, HOST is the bound address: the wildcard bind (0.0.0.0/32, ::/128) is every
        # interface, what a port grant gives (a narrower bind exposes less).
        return rule.host == "*" or (direction == "IN" and is_wildcard_bind(rule.host))

    allow_any_host = _normalise(
        _union(r for r in rules if r.action == "ALLOW" and any_host(r)) + tuple(own)
    )
    allow_some_host = _union(r for r in rules if r.action == "ALLOW" and not any_host(r))
    deny_any_host = _union(r for r in rules if r.action == "DENY" and r.host == "*")
    deny_some_host = [r for r in rules if r.action == "DENY" and r.host != "*"]
    verb = "connect to" if direction == "OUT" else "bind"
    exact = _subtract(allow_any_host, deny_any_host)
    host_only = _subtract(_subtract(allow_some_host, deny_any_host), allow_any_host)
    if python_layer:
        granted = _normalise(exact + host_only)
        if host_only:
            notes.append(
                limits.notice(
                    "net.tcp-host-part", python_layer, verb=verb, ports=format_ports(host_only)
                )
            )
    else:
        granted = exact
        for rule in rules:
            if (
                rule.action == "ALLOW"
                and not any_host(rule)
                and _intersect(_ports_of(rule), host_only)
            ):
                problems.append(
                    limits.notice(
                        "net.tcp-host-part-refused",
                        python_layer,
                        origin=rule.origin,
                        rule=rule.text,
                        host=rule.host,
                    ).text
                )
    for rule in deny_some_host:
        overlap = _intersect(_ports_of(rule), granted)
        if overlap and not python_layer:
            problems.append(
                limits.notice(
                    "net.tcp-deny-host-refused",
                    python_layer,
                    origin=rule.origin,
                    rule=rule.text,
                    ports=format_ports(overlap),
                ).text
            )
        elif overlap:
            notes.append(
                limits.notice("net.tcp-deny-host", python_layer, rule=rule.text, origin=rule.origin)
            )
    return granted


def _udp_allowed(
    policy: Policy, python_layer: bool, problems: list[str], notes: list[limits.Notice]
) -> bool:
    """Whether UDP sockets may be created at all (Landlock cannot filter UDP)."""

    allows = [r for r in policy.net if r.action == "ALLOW" and r.proto in ("UDP", "*")]
    if python_layer:
        # Name resolution sends UDP to the resolver; the Python layer judges every name.
        dns = any(r.action == "ALLOW" and r.direction in ("OUT", "*") for r in policy.net)
        if allows or dns:
            notes.append(limits.notice("net.udp", python_layer))
            return True
        return False
    if not allows:
        return False
    full_out = any(
        r.host == "*" and r.ports is None and r.direction in ("OUT", "*") for r in allows
    )
    denies = [r for r in policy.net if r.action == "DENY" and r.proto in ("UDP", "*")]
    if not full_out or denies:
        for rule in allows if not full_out else denies:
            problems.append(
                limits.notice(
                    "net.udp-refused", python_layer, origin=rule.origin, rule=rule.text
                ).text
            )
        return False
    if not any(r.host == "*" and r.ports is None and r.direction in ("IN", "*") for r in allows):
        notes.append(limits.notice("net.udp-in", python_layer))
    return True


# -- the provider ---------------------------------------------------------------------------------


#: Installation prefixes that are whole system trees: a distribution's Python lives in ``/usr``.
_SYSTEM_PREFIXES: Final = frozenset({"/", "/usr", "/usr/local"})


def _interpreter_dirs(prefix: str) -> list[str]:
    """What to grant for an installation prefix: the prefix itself, except for a system tree
    (``/usr``), where only its ``lib*/pythonX.Y`` directories are granted (not all of /usr)."""

    prefix = os.path.normpath(prefix)
    if prefix not in _SYSTEM_PREFIXES:
        return [prefix]
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    base = prefix.rstrip("/")
    return [f"{base}/lib/{version}", f"{base}/lib64/{version}"]


def _package_dir() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _python_layer(policy: Policy) -> bool:
    return bool(policy.py_sandbox.value)


def _beneath(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def build_plan(
    policy: Policy,
    *,
    abi: int,
    tmpdir: str | None = None,
    prefixes: Sequence[str] = (),
    executables: Sequence[str] = (),
    denials_file: str | None = None,
) -> Plan:
    """Turn the policy and the run into the rules to apply; ``ConfigError`` if the network part
    cannot be enforced (py-sandbox=false only: then nothing else would refuse it).

    ``denials_file`` (``--denials=FILE``, appended to by the Python layer from inside the
    sandbox) gets write access to that one file, which must exist (see ``prepare``).
    """

    rights = rights_for_abi(abi)
    python_layer = _python_layer(policy)
    problems: list[str] = []
    notes: list[limits.Notice] = []

    grants: list[PathGrant] = []
    for rule in policy.expose_ro:
        grants.append(PathGrant(rule.path, RIGHTS_RO, f"expose-ro ({rule.origin})", True))
    for rule in policy.expose_rw:
        grants.append(PathGrant(rule.path, RIGHTS_RW, f"expose-rw ({rule.origin})", True))
    for prefix in prefixes:
        for path in _interpreter_dirs(prefix):
            grants.append(PathGrant(path, RIGHTS_RO, "interpreter installation"))
    for exe in executables:
        grants.append(PathGrant(exe, RIGHTS_RO, "interpreter"))
        grants.append(PathGrant(os.path.realpath(exe), RIGHTS_RO, "interpreter"))
    grants.append(PathGrant(_package_dir(), RIGHTS_RO, "python-sb's own package (bootstrap)"))
    grants.extend(
        PathGrant(p, RIGHTS_RO, "default: loader, libraries, name service, TLS, data")
        for p in SYSTEM_READ
    )
    grants.extend(PathGrant(p, r, "default: device") for p, r in SYSTEM_DEVICES)
    if tmpdir:
        grants.append(PathGrant(tmpdir, RIGHTS_RW, "private temporary directory", True))
    if denials_file:
        grants.append(PathGrant(denials_file, FS_WRITE_FILE, "--denials file", True))

    announced: list[limits.Notice] = []
    grants = _keep_read_only_out_of_writable(grants, policy, python_layer, announced)

    def say(key: str, **fields: object) -> None:
        notes.append(limits.notice(key, python_layer, **fields))

    say("files.metadata")
    say("files.shared-libraries")
    say("files.accounts")
    for rule in policy.ignore:
        say("files.ignore", rule=rule.text, origin=rule.origin)
    if policy.expose_rw:
        notes.append(limits.symlink_notice(policy))
    writable = [g for g in grants if g.rights & FS_WRITE_FILE and g.rights & FS_READ_DIR]
    for rule_file in policy.rule_files:
        holders = [g for g in writable if _beneath(rule_file, g.path)]
        if holders:
            say("files.rule-file-writable", path=rule_file, rw=holders[0].path)
    for include in policy.includes:
        if include.status != "missing":
            continue
        holders = [g for g in writable if _beneath(include.resolved, g.path)]
        if holders:
            say("files.missing-include-writable", path=include.resolved, rw=holders[0].path)
    for default in grants:
        if default.required or default.rights & FS_WRITE_FILE:
            continue
        holders = [g for g in writable if g.path != default.path and _beneath(default.path, g.path)]
        if holders and os.path.lexists(default.path):
            say(
                "files.default-below-writable",
                path=default.path,
                what=default.why,
                rw=holders[0].path,
            )
    if (not python_layer or _may_run_programs(policy)) and not _programs_exposed(policy):
        announced.append(limits.notice("files.executables", python_layer))

    if rights.net:
        own, ephemeral = _own_server_ports(policy)
        if own and not python_layer:
            # A DENY of some host on an own-server port could not be enforced once the port
            # is open to every host: that port is not granted (said), rather than refusing
            # a rule file that ran before the own-server grant existed.
            for deny in policy.net:
                if deny.action != "DENY" or deny.host == "*" or not _covers(deny, "TCP", "OUT"):
                    continue
                kept = _intersect(own, _ports_of(deny))
                if kept:
                    own = _subtract(own, kept)
                    say(
                        "net.tcp-own-server-deny",
                        rule=deny.text,
                        origin=deny.origin,
                        ports=format_ports(kept),
                    )
        connect_ports = _tcp_ports(policy, "OUT", python_layer, problems, notes, own)
        bind_ports = _tcp_ports(policy, "IN", python_layer, problems, notes)
        for net in policy.net:
            wildcard = net.action == "ALLOW" and limits.is_wildcard_bind_rule(net)
            if wildcard and _covers(net, "TCP", "IN"):
                notes.append(limits.wildcard_bind_notice(net, python_layer))
        if own:
            out_only = _tcp_ports(policy, "OUT", python_layer, [], [])
            added = _subtract(_intersect(own, connect_ports), out_only)
            if added:
                say(
                    "net.tcp-own-server",
                    ports=format_ports(added),
                    ephemeral=", port 0 read as the kernel's ephemeral ports" if ephemeral else "",
                )
        connect: PortSet | None = None if connect_ports == ALL_PORTS else connect_ports
        bind: PortSet | None = None if bind_ports == ALL_PORTS else bind_ports
    else:
        connect = bind = None
        if policy_restricts_tcp(policy):
            if python_layer:
                say("net.no-tcp-rules", abi=abi)
            else:
                problems.append(limits.notice("net.no-tcp-rules-refused", False, abi=abi).text)
    say("net.host-names")
    allow_udp = _udp_allowed(policy, python_layer, problems, notes)
    allow_unix = _unix_sockets_allowed(policy, problems)
    if not allow_unix and (not python_layer or _may_import(policy, "socket")):
        announced.append(limits.notice("net.unix-sockets", python_layer))
    elif allow_unix:
        say("net.unix-sockets-allowed")
    if not rights.scoped:
        say("signals.no-scopes", abi=abi)
    if problems:
        raise ConfigError(
            "os-sandbox=landlock cannot enforce these rules with py-sandbox=false:\n  "
            + "\n  ".join(problems)
        )
    return Plan(
        abi=abi,
        rights=rights,
        paths=tuple(grants),
        connect=connect,
        bind=bind,
        allow_udp=allow_udp,
        allow_unix=allow_unix,
        unenforced=tuple(item.text for item in notes),
        announced=tuple(item.text for item in announced),
        notices=(*announced, *notes),
    )


def _may_import(policy: Policy, module: str) -> bool:
    return any(rule.name in ("*", module) for rule in policy.python_import)


def _may_run_programs(policy: Policy) -> bool:
    """Whether the rules let Python code start other programs (python-api grants)."""

    return any(
        rule.action == "ALLOW"
        and (
            rule.target in ("*", "process-exec")
            or rule.target.startswith(("os.exec", "os.spawn", "os.posix_spawn", "subprocess."))
            or rule.target in ("os.system", "os.popen", "pty.spawn")
        )
        for rule in policy.python_api
    )


def _programs_exposed(policy: Policy) -> bool:
    """Whether the rules already expose programs to run: an executable file (learning writes
    ``expose-ro=/usr/bin/PROGRAM`` for each program a run started) or a ``bin`` directory.
    The notice that Landlock runs only exposed programs is then no news (issue 26)."""

    for rule in (*policy.expose_ro, *policy.expose_rw):
        path = rule.path
        if os.path.basename(path.rstrip("/")) in ("bin", "sbin"):
            return True
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return True
        # A directory holding the system's programs (``expose-ro=/``, ``/usr``: learning writes
        # ``expose-ro=/`` for a run that listed the root), not only one named bin.
        if any(_beneath(os.path.realpath(bin_dir), path) for bin_dir in _SYSTEM_BIN_DIRS):
            return True
    return False


#: Where the programs a child runs usually live (``_programs_exposed``).
_SYSTEM_BIN_DIRS: Final = ("/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin")


#: Above this many entries to enumerate, a read-only exposure below a writable one is refused
#: rather than planned (each entry is one Landlock rule, added at every start).
MAX_SPLIT_ENTRIES: Final = 10_000

#: Rights that a writable directory keeps on itself when a read-only exposure lies below it:
#: reading only (write rights granted there would reach the read-only path).
_ANCESTOR_RIGHTS: Final = RIGHTS_RO


def _keep_read_only_out_of_writable(
    grants: list[PathGrant], policy: Policy, python_layer: bool, announced: list[limits.Notice]
) -> list[PathGrant]:
    """Issue 11, point 1: Landlock rights are inherited down the tree and add up, so an
    ``expose-ro`` below an ``expose-rw`` would be writable. Each such writable directory keeps
    read rights on itself and on every directory on the way down to a read-only path; its
    write rights go to each other entry of those directories (directories whole, files with
    file-level rights), enumerated now. The price, announced at start: no entry can be
    created, removed or renamed directly in the directories on the way. ``ConfigError``
    (naming both rules) when that cannot be planned: a directory that cannot be listed, or
    too many entries."""

    read_only = {rule.path: rule for rule in policy.expose_ro}
    for rw_rule in policy.expose_rw:
        read_only.pop(rw_rule.path, None)  # the same path in both: read-write wins (SPEC §2.5)
    rules_rw = {rw_rule.path: rw_rule for rw_rule in policy.expose_rw}
    out: list[PathGrant] = []
    for grant in grants:
        rule = rules_rw.get(grant.path) if grant.rights & FS_WRITE_FILE else None
        inner = [path for path in read_only if path != grant.path and _beneath(path, grant.path)]
        # A read-only path below another one is kept out by that one already.
        inner = [p for p in inner if not any(q != p and _beneath(p, q) for q in inner)]
        if rule is None or not inner or not os.path.isdir(grant.path):
            out.append(grant)
            continue
        chain: set[str] = set()
        for path in inner:
            parent = os.path.dirname(path)
            while _beneath(parent, grant.path):
                chain.add(parent)
                if parent == grant.path:
                    break
                parent = os.path.dirname(parent)
        out.append(PathGrant(grant.path, _ANCESTOR_RIGHTS, grant.why, grant.required))

        def refused(reason: str, rule: Any = rule, ro_rule: Any = read_only[inner[0]]) -> Exception:
            """python-sb refuses to start: this split cannot keep the read-only path so."""

            return ConfigError(
                limits.notice(
                    "files.nested-read-only-refused",
                    python_layer,
                    ro=ro_rule.text,
                    ro_origin=ro_rule.origin,
                    rw=rule.text,
                    rw_origin=rule.origin,
                    reason=reason,
                ).text
            )

        count = 0
        for directory in sorted(chain):
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except OSError as exc:
                raise refused(f"cannot list {directory}: {exc.strerror}") from None
            for entry in entries:
                if entry.path in chain or entry.path in read_only:
                    continue
                try:
                    if entry.is_symlink():
                        continue  # judged where it points (its target has its own grant)
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                count += 1
                if count > MAX_SPLIT_ENTRIES:
                    raise refused(
                        f"more than {MAX_SPLIT_ENTRIES} entries to grant one by one in the "
                        "directories on the way; expose a deeper directory read-write instead"
                    )
                rights = grant.rights if is_dir else grant.rights & FS_FILE_RIGHTS
                out.append(PathGrant(entry.path, rights, grant.why, False, follow=False))
        for path in sorted(inner):
            ro_rule = read_only[path]
            shown = ", ".join(display_path(d) for d in sorted(chain) if _beneath(path, d))
            announced.append(
                limits.notice(
                    "files.nested-read-only",
                    python_layer,
                    ro=ro_rule.text,
                    ro_origin=ro_rule.origin,
                    rw=rule.text,
                    rw_origin=rule.origin,
                    ro_path=display_path(path),
                    chain=shown,
                )
            )
    return out


def policy_restricts_tcp(policy: Policy) -> bool:
    """Whether some TCP connect or bind is not allowed by the rules (so TCP needs filtering)."""

    for direction in ("OUT", "IN"):
        rules = [r for r in policy.net if _covers(r, "TCP", direction)]
        if any(r.action == "DENY" for r in rules):
            return True
        if not any(r.host == "*" and r.ports is None for r in rules):
            return True
    return False


def _unix_sockets_allowed(policy: Policy, problems: list[str]) -> bool:
    line = policy.provider_param("landlock", "unix-sockets")
    if line is None:
        return False
    value = line.value.strip().lower()
    if value in ("true", "allow", "yes", "1"):
        return True
    if value in ("false", "deny", "no", "0"):
        return False
    problems.append(f"{line.origin}: landlock.unix-sockets must be true or false, not {value!r}")
    return False


# -- applying it ----------------------------------------------------------------------------------


def _u64(value: int) -> bytes:
    return value.to_bytes(8, sys.byteorder)


def _add_path(ruleset: int, grant: PathGrant, handled: int) -> bool:
    try:
        flags = os.O_PATH | os.O_CLOEXEC | (0 if grant.follow else os.O_NOFOLLOW)
        fd = os.open(grant.path, flags)
    except FileNotFoundError:
        if grant.required:
            raise ConfigError(f"{grant.why}: {grant.path} does not exist") from None
        return False
    except OSError as exc:  # a loop of symlinks, a component that is not a directory...
        if grant.required:
            raise ConfigError(f"{grant.why}: cannot open {grant.path}: {exc.strerror}") from None
        return False
    try:
        allowed = grant.rights & handled
        kind = os.fstat(fd).st_mode & 0o170000  # S_IFMT (no stat import)
        if kind == 0o120000:  # S_IFLNK: an entry that became a link since the plan
            return False
        if kind != 0o040000:  # not S_IFDIR
            allowed &= FS_FILE_RIGHTS
        if not allowed:
            return False
        attr = _u64(allowed) + fd.to_bytes(4, sys.byteorder, signed=True)
        _linux.syscall("landlock_add_rule", ruleset, _RULE_PATH_BENEATH, attr, 0)
        return True
    finally:
        os.close(fd)


def apply(
    plan: Plan, *, seccomp_filter: bytes | None = None, guard: ListenGuard | None = None
) -> None:
    """Restrict the calling process (and everything it will exec) to ``plan``. Irreversible.

    Order: build the ruleset, drop capabilities (beyond :data:`KEPT_CAPABILITIES`), set
    ``no_new_privs``, restrict, then load the seccomp filter. Any failure raises before the
    program could run unrestricted. ``guard``: the filter answers ``listen`` through it
    (``seccomp_filter`` built with ``listen="notify"``); the listener goes to python-sb.
    """

    from pysandboxes.providers import seccomp

    rights = plan.rights
    handled_net = rights.net
    if plan.connect is None:
        handled_net &= ~NET_CONNECT_TCP
    if plan.bind is None:
        handled_net &= ~NET_BIND_TCP
    attr = _u64(rights.fs) + _u64(handled_net) + _u64(rights.scoped)
    ruleset = _linux.syscall("landlock_create_ruleset", attr, len(attr), 0)
    try:
        for grant in plan.paths:
            _add_path(ruleset, grant, rights.fs)
        if plan.proc_self:
            # /proc/self as the mounted /proc names it: in a partial-mode worker's own PID
            # namespace (launch/spawn.py) getpid() is the namespace's number, not /proc's.
            try:
                own_pid = os.readlink("/proc/self")
            except OSError:
                own_pid = str(os.getpid())
            own = PathGrant(f"/proc/{own_pid}", FS_READ_FILE | FS_READ_DIR, "own /proc")
            _add_path(ruleset, own, rights.fs)
        for access, ports in ((NET_CONNECT_TCP, plan.connect), (NET_BIND_TCP, plan.bind)):
            if ports is None or not handled_net & access:
                continue
            prefix, order = _u64(access), sys.byteorder
            attrs = (prefix + p.to_bytes(8, order) for lo, hi in ports for p in range(lo, hi + 1))
            _linux.syscall_each("landlock_add_rule", (ruleset, _RULE_NET_PORT), attrs, 0)
        _linux.drop_capabilities(KEPT_CAPABILITIES)
        _linux.set_no_new_privs()
        flags = RESTRICT_SELF_LOG_NEW_EXEC_ON if plan.abi >= 7 else 0
        _linux.syscall("landlock_restrict_self", ruleset, flags)
    finally:
        os.close(ruleset)
    if seccomp_filter is None:
        seccomp_filter = filter_for(plan, "notify" if guard is not None else listen_mode(plan))
    listener = seccomp.install(seccomp_filter, listener=guard is not None)
    if guard is not None:
        guard.hand_over(listener)


def filter_for(plan: Plan, listen: str = "allow") -> bytes:
    """The seccomp filter of a Landlock run (``docs/seccomp.md``): UDP and ``AF_UNIX`` sockets
    as the plan says; sends with ``MSG_FASTOPEN`` refused while Landlock restricts connect (the
    connection such a send makes never meets Landlock's connect rule); the host's processes
    being in reach (no PID namespace), changes to other processes' scheduling, priority and
    resource limits refused; ``listen`` as :func:`listen_mode` says."""

    from pysandboxes.providers import seccomp

    return seccomp.filter_program(
        allow_udp=plan.allow_udp,
        allow_unix=plan.allow_unix,
        fastopen=plan.connect is None or not plan.rights.net,
        foreign_processes=True,
        listen=listen,
    )


def listen_mode(plan: Plan, mode: str = "enforce") -> str:
    """How the filter answers ``listen`` (issue 23, class 2: on a socket never bound, the kernel
    binds a port of its choice on every address, and Landlock's bind rule is not consulted):

    - ``allow``: Landlock does not restrict binding, or grants port 0 (the kernel's choice: the
      bind ``listen`` makes is then one ``bind(0)`` gets), or a learning/audit run (it
      enforces nothing, and its own seccomp listener would collide with this one);
    - ``refuse``: no port may be bound and no Unix socket made: nothing can listen legitimately;
    - ``notify``: python-sb answers each call (:mod:`pysandboxes.providers.listen_guard`),
      refusing a socket never bound.
    """

    if plan.bind is None or not plan.rights.net or mode != "enforce":
        return "allow"
    if any(lo == 0 for lo, _hi in plan.bind):
        return "allow"
    if not plan.bind and not plan.allow_unix:
        return "refuse"
    return "notify"


def _describe(plan: Plan) -> list[str]:
    lines = [f"landlock: ABI {plan.abi} (kernel), applied by python-sb to itself before exec"]
    entries: dict[str, int] = {}
    for grant in plan.paths:
        if not grant.follow:  # an entry of a writable directory split around a read-only path
            entries[grant.why] = entries.get(grant.why, 0) + 1
    for grant in plan.paths:
        if not grant.follow:
            continue
        if grant.required or grant.why.startswith(("interpreter", "private")):
            if grant.rights & FS_WRITE_FILE:
                kind = "read-write"
            elif grant.why.startswith("expose-rw"):  # split around a read-only path
                count = entries.get(grant.why, 0)
                kind = f"read-only itself, read-write entry by entry ({count} entries)"
            else:
                kind = "read-only"
            lines.append(f"  files {kind}: {grant.path}  [{grant.why}]")
    lines.append(
        "  files read-only: the default grants (docs/rules.md: certificate stores, time zones, "
        "mime.types, name service, accounts, the loader and shared libraries); /dev/null, "
        "/dev/zero, /dev/full, /dev/urandom, /dev/random read-write; the process's own /proc "
        "entry"
    )
    if not plan.rights.net:
        lines.append("  TCP: not restricted by the kernel (Landlock ABI < 4)")
    for verb, ports in (("connect", plan.connect), ("bind", plan.bind)):
        if plan.rights.net:
            shown = "any port" if ports is None else f"port(s) {format_ports(ports)}"
            lines.append(f"  TCP {verb}: {shown}")
    listen = {
        "allow": "allowed",
        "refuse": "refused (seccomp: nothing may be bound)",
        "notify": "answered by python-sb, which stays as the parent: refused on a socket "
        "never bound (the kernel would pick its port on every address)",
    }[listen_mode(plan)]
    if plan.rights.net:
        lines.append(f"  TCP listen(): {listen}")
    lines.append(f"  UDP sockets: {'allowed' if plan.allow_udp else 'refused (seccomp)'}")
    lines.append(
        f"  Unix sockets (socket(AF_UNIX)): {'allowed' if plan.allow_unix else 'refused (seccomp)'}"
        "; socketpair() allowed"
    )
    if plan.rights.scoped:
        lines.append("  scopes: abstract Unix sockets and signals limited to the sandbox")
    lines.append("  no_new_privs; seccomp filter (docs/seccomp.md)")
    return lines


def _apply_step(plan: Plan, program: bytes, guard: ListenGuard | None = None) -> None:
    """The launcher's ``pre_exec`` step: a kernel refusal becomes a clear error, not a traceback
    (the program does not run: nothing was exec'd)."""

    try:
        apply(plan, seccomp_filter=program, guard=guard)
    except OSError as exc:
        raise ProviderUnavailableError(
            f"os-sandbox=landlock could not restrict the process: {exc}"
        ) from None


def _existing_denials_file(path: str | None) -> str | None:
    """Create ``--denials=FILE`` if missing: inside the sandbox the Python layer may append to
    it but not create files in its directory (that would need the whole directory writable)."""

    if not path:
        return None
    path = os.path.abspath(path)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644))
    except OSError as exc:
        raise ConfigError(f"--denials={path}: cannot create it: {exc.strerror}") from None
    return path


def _with_edge_proxy(policy: Policy, denials: str | None) -> tuple[Policy, HostEdge | None]:
    """When a TCP ``OUT`` rule names a host: the edge proxy on the host's loopback, for the
    programs that honour the proxy variables (Landlock cannot redirect the others: it filters
    TCP by port, docs/network.md), and the policy with a rule granting its port."""

    from pysandboxes.providers.edge_rules import edge_guard_rule, names_hosts_for_tcp

    if not _python_layer(policy) or not names_hosts_for_tcp(policy):
        # Landlock alone refuses host rules it cannot hold (a name, a DENY of a host on an
        # open port) before anything runs, as before: no proxy to start.
        return policy, None
    rule = edge_guard_rule(policy, LandlockProvider.edge)
    if rule is None:
        return policy, None
    from pysandboxes.guard.network import build_rules
    from pysandboxes.providers.edge_proxy import HostEdge

    edge = HostEdge(build_rules(policy), denials)
    # Landlock grants ports, not hosts: the proxy's port is granted as the port it is (on the
    # host's loopback, a port only the proxy listens on), not as a host rule that py-sandbox=false
    # would refuse.
    from pysandboxes.policy.netrules import parse_net

    port_rule = parse_net(f"ALLOW|TCP|*|{edge.port}|OUT", rule.origin)
    return policy.replace(net=(*policy.net, port_rule)), edge


def edge_env(edge: HostEdge | None) -> dict[str, str]:
    if edge is None:
        return {}
    from pysandboxes.providers.edge_rules import proxy_env

    return proxy_env(edge.port)


class LandlockProvider(Provider):
    """The ``landlock`` provider (see the module docstring)."""

    name = "landlock"
    kernel = True
    edge = "variables"  # a host listener the proxy variables name (Python layer on)

    def availability(self) -> Availability:
        abi, err = _probe()
        if abi > 0:
            return Availability(True, f"Landlock ABI {abi}")
        reason, hint = _unavailable_reason(err)
        return Availability(False, reason, hint)

    def prepare(self, launch: Launch) -> Prepared:
        available = self.availability()
        if not available:
            raise ProviderUnavailableError(
                f"os-sandbox=landlock cannot run here: {available.reason}; {available.install_hint}"
            )
        context = launch.context
        executables = [launch.child_argv[0]] if launch.child_argv else []
        if context.python:
            executables.append(context.python)
        denials = _existing_denials_file(context.denials_file)
        policy, edge = _with_edge_proxy(launch.policy, denials)
        env = {**launch.env, **edge_env(edge)}
        plan = build_plan(
            policy,
            abi=landlock_abi(),
            tmpdir=context.tmpdir,
            prefixes=context.prefixes,
            executables=executables,
            denials_file=denials,
        )
        warnings = [f"landlock: {note}" for note in plan.announced]
        if not _python_layer(launch.policy):
            warnings += [f"landlock, py-sandbox=false: {note}" for note in plan.unenforced]
        # Everything that imports or allocates is done here, in the parent: when the launcher
        # spawns (learning, audit), pre_exec runs between fork and exec, where taking the import
        # lock of a multi-threaded parent could deadlock. The probe above bound ``syscall``.
        listen = listen_mode(plan, context.mode)
        program = filter_for(plan, listen)
        edge_fds = () if edge is None else (edge.write_end,)
        if listen != "notify":
            return Prepared(
                argv=list(launch.child_argv),
                env=env,
                pass_fds=(*launch.pass_fds, *edge_fds),
                pre_exec=[lambda: _apply_step(plan, program)],
                warnings=warnings,
            )
        # python-sb answers the program's listen() calls: it stays as the parent.
        from pysandboxes.providers.listen_guard import ListenGuard

        guard = ListenGuard()
        guard.start()
        return Prepared(
            argv=list(launch.child_argv),
            env=env,
            pass_fds=(*launch.pass_fds, guard.child_fd, *edge_fds),
            pre_exec=[lambda: _apply_step(plan, program, guard)],
            needs_parent=True,
            cleanup=[guard.close, *([] if edge is None else [edge.close])],
            warnings=warnings,
        )

    def announcements(self, policy: Policy, mode: str) -> list[limits.Notice]:
        """The plan's announced limits (said at every start) and what it leaves to the Python
        layer (said at start when that is off), as records; a policy Landlock refuses is one
        refused record."""

        python_layer = _python_layer(policy)
        try:
            plan = build_plan(policy, abi=landlock_abi() or 7, prefixes=(sys.prefix,))
        except ConfigError as exc:
            return [limits.Notice(None, limits.REFUSED, str(exc), True)]
        keys = {item.text: item.key for item in plan.notices}
        found = [limits.Notice(keys.get(text), limits.LIMIT, text, True) for text in plan.announced]
        found += [
            limits.Notice(keys.get(text), limits.LIMIT, text, not python_layer)
            for text in plan.unenforced
        ]
        return found

    def explain(self, policy: Policy) -> Sequence[str]:
        available = self.availability()
        if not available:
            return [f"landlock: not available here: {available.reason} ({available.install_hint})"]
        try:
            plan = build_plan(policy, abi=landlock_abi(), prefixes=(sys.prefix,))
        except ConfigError as exc:
            return [f"landlock: refuses to run: {exc}"]
        from pysandboxes.providers.net_enforcement import explain_lines

        return [*_describe(plan), *explain_lines(policy, self.name)]


PROVIDER: Final = LandlockProvider()
