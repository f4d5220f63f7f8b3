"""What each rule kind means under each provider: enforced, an announced limit, or refused.

DESIGN decision 1: a rule has one meaning under every provider; what a kernel provider cannot
enforce is said at start or refused, never silently widened. This module is the one place that
holds those sentences. Each provider says which apply to a policy (its ``announcements(policy,
mode)`` method, a list of :class:`Notice`: ``--explain`` prints those records as text and as
JSON, ``tools/explain.py``) and builds its start warnings (``Prepared.warnings``, printed by
``launch/start.py``) from the same :func:`notice` calls; nothing here goes by a provider's
name. ``docs/security-model.md`` lists :data:`LIMITS` (:func:`markdown_table`, checked by a
unit test).

Each :class:`Limit` has a key, the rule kind it is about, the providers it concerns, the status
(``enforced`` with a difference worth knowing, ``limit``: an announced limit, ``refused``:
python-sb refuses to start), whether it depends on the Python layer (``python_layer``: ``None``
either way, ``False``: only with ``py-sandbox=false``), and the sentence, with ``{fields}``
filled in by the provider. A limit whose meaning changes with the Python layer ends its sentence
with ``{where}``: what the Python layer does about it, or that nothing does.

Imported by the providers' ``prepare`` (start-up path): plain tuples, no ``typing``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Final

    from pysandboxes.policy.model import NetRule, Policy

ENFORCED: Final = "enforced"
LIMIT: Final = "limit"
REFUSED: Final = "refused"

NAMESPACE = ("bwrap", "unshare")
#: The providers whose file system is the mount plan of ``_ns_mounts`` (qemu exports it to the
#: guest over 9p) and whose net= rules are the ruleset of ``netns``.
TREE = ("bwrap", "unshare", "qemu")
KERNEL = ("landlock", "bwrap", "unshare", "qemu")


def _loopback_name(name: str) -> bool:
    """Whether ``name`` resolves (once per run, ``policy.netrules.resolve_name``) to a loopback
    address: such a rule is pasta's host-loopback forward, which the edge proxy does not see
    (loopback is never redirected), so its address is reached without the name."""

    import ipaddress

    from pysandboxes.policy.netrules import resolve_name

    try:
        return any(ipaddress.ip_address(a).is_loopback for a in resolve_name(name))
    except (OSError, UnicodeError, ValueError):
        return False


#: The providers whose TCP traffic under rules naming hosts passes the edge proxy
#: (``providers/edge_proxy.py``), which judges the host name, not the addresses pinned at start.
EDGE_PROXIED = ("bwrap", "unshare", "qemu")


class Limit:
    """One row of the table (see the module docstring)."""

    __slots__ = ("key", "kind", "providers", "python_layer", "status", "text", "where")

    def __init__(
        self,
        key: str,
        kind: str,
        providers: tuple[str, ...],
        status: str,
        text: str,
        *,
        python_layer: bool | None = None,
        where: tuple[str, str] = ("", ""),
    ) -> None:
        self.key = key
        self.kind = kind
        self.providers = providers
        self.status = status
        self.text = text
        self.python_layer = python_layer
        #: What ``{where}`` says with the Python layer on, and off.
        self.where = where


_PY_ONLY = ("enforced by the Python layer only", "NOT enforced")

LIMITS: Final[tuple[Limit, ...]] = (
    Limit(
        "processes.pid-namespace",
        "a partial-mode worker's processes",
        ("subprocess", "landlock"),
        ENFORCED,
        "a worker's processes end with it: it runs in a PID namespace of its own, whose every "
        "process the kernel kills when the worker ends or is killed (setsid does not leave it)",
    ),
    Limit(
        "processes.subreaper",
        "a partial-mode worker's processes",
        ("subprocess", "landlock"),
        ENFORCED,
        "a worker's processes end with it: python-sb holds them as their child subreaper "
        "(PR_SET_CHILD_SUBREAPER; no PID namespace here: {reason}) and kills every one left "
        "when the worker ends or is stopped",
    ),
    Limit(
        "processes.process-group",
        "a partial-mode worker's processes",
        ("subprocess",),
        LIMIT,
        "a worker's process group ends with it, but a process that leaves the group (setsid, "
        "a daemon) can outlive the worker: this platform offers no PID namespace or subreaper "
        "to python-sb",
    ),
    Limit(
        "all.no-enforcer",
        "every rule",
        ("none", "subprocess"),
        LIMIT,
        "no Python layer and no kernel boundary: the {kinds} rules are NOT enforced (the "
        "program may read, write, connect and import whatever this user can; only env= holds)",
        python_layer=False,
    ),
    Limit(
        "files.nested-read-only",
        "expose-ro below expose-rw",
        ("landlock",),
        LIMIT,
        "'{ro}' ({ro_origin}) lies below '{rw}' ({rw_origin}): Landlock rights add up down the "
        "tree, so {rw} gets read rights only and its write rights are granted entry by entry "
        "(enumerated at start), never above {ro_path}: directly in {chain}, existing files stay "
        "writable but no entry can be created, removed or renamed",
    ),
    Limit(
        "files.nested-read-only-refused",
        "expose-ro below expose-rw",
        ("landlock",),
        REFUSED,
        "'{ro}' ({ro_origin}) lies below '{rw}' ({rw_origin}) and cannot be kept read-only "
        "under Landlock: {reason}",
    ),
    Limit(
        "files.default-below-writable",
        "expose-rw",
        ("landlock",),
        LIMIT,
        "{path} ({what}) lies in writable {rw}: Landlock cannot take write access back from a "
        "path inside a writable one ({where})",
        python_layer=False,
        where=("refused by the Python layer only", "NOT refused"),
    ),
    Limit(
        "files.rule-file-writable",
        "rule files",
        ("landlock",),
        LIMIT,
        "rule file {path} lies in writable {rw}: Landlock cannot take write access back from a "
        "file inside it ({where})",
        python_layer=False,
        where=("protected by the Python layer only", "NOT protected"),
    ),
    Limit(
        "files.missing-include-writable",
        "rule files",
        KERNEL,
        LIMIT,
        "included rule file {path} does not exist and lies in writable {rw}: creating it would "
        "add rules to the next run ({where})",
        python_layer=False,
        where=("refused by the Python layer only", "NOT refused"),
    ),
    Limit(
        "files.metadata",
        "expose-ro / expose-rw",
        ("landlock",),
        LIMIT,
        "file metadata (chmod, chown, utime, extended attributes) is not restricted by "
        "Landlock: outside the exposures, and in read-only exposures too (a rule file's mode, a "
        "read-only file's times); only the set-user-ID and set-group-ID bits are refused "
        "(seccomp) ({where})",
        python_layer=False,
        where=("the Python layer judges it", "NOT enforced"),
    ),
    Limit(
        "files.ignore",
        "ignore",
        ("landlock",),
        LIMIT,
        "'{rule}' ({origin}): Landlock cannot hide a path ({where})",
        python_layer=False,
        where=_PY_ONLY,
    ),
    Limit(
        "files.ignore-created-later",
        "ignore",
        TREE,
        LIMIT,
        "'{rule}' ({origin}): matching entries of the exposed trees are made absent when the "
        "sandbox starts; a file created later that matches is not hidden by the kernel layer "
        "({where})",
        python_layer=False,
        where=("the Python layer hides it", "NOT hidden"),
    ),
    Limit(
        "files.ignore-system-trees",
        "ignore",
        TREE,
        LIMIT,
        "'{rule}' ({origin}): applied to the exposed trees (a pattern naming a path also to "
        "the /etc entries python-sb binds one by one); the system trees bound whole (/usr, "
        "/lib*, the interpreter's installation, the certificate directories) are not searched, "
        "so a matching file there stays readable ({where})",
        python_layer=False,
        where=("the Python layer hides it", "NOT hidden"),
    ),
    Limit(
        "files.executables",
        "expose-ro",
        ("landlock",),
        LIMIT,
        "Landlock lets a program run only from exposed directories and the default grants: to "
        "run child programs (subprocess, os.exec*), expose their directory (expose-ro=/usr/bin)",
    ),
    Limit(
        "files.system-trees",
        "defaults",
        TREE,
        LIMIT,
        "/usr and /lib* are readable whole (the system trees a namespace sandbox runs programs "
        "from), with /etc/ld.so.cache and /etc/alternatives; the Python layer grants only the "
        "interpreter's installation and the default grants ({where})",
        python_layer=False,
        where=("the Python layer judges every open", "NOT narrowed"),
    ),
    Limit(
        "files.dotdot-through-absent",
        "expose-*",
        TREE,
        ENFORCED,
        "a path that passes through a directory the sandbox does not hold "
        "(not-exposed/../exposed/file, or a link in such a directory that leads into an "
        "exposure) does not resolve (ENOENT): the kernel walks '..' and links through the "
        "directories that exist in the sandbox, where the Python layer judges the path where "
        "it lands; name exposed paths directly",
    ),
    Limit(
        "files.symlink-target",
        "expose-rw",
        KERNEL,
        LIMIT,
        "creating a symbolic link in writable {rw} is not refused by the kernel, whatever it "
        "points to: what is read or written through it is judged where it lands, but a link "
        "leading out of the exposures stays there after the run ({where})",
        python_layer=False,
        where=("the Python layer refuses creating it", "NOT refused"),
    ),
    Limit(
        "files.unexposed-absent",
        "expose-*",
        TREE,
        ENFORCED,
        "a path no rule exposes does not exist in the sandbox (ENOENT, os.stat and "
        "os.path.exists included), where the Python layer and landlock refuse its content but "
        "let its metadata (existence, size, times) be seen",
    ),
    Limit(
        "files.special-read-only",
        "expose-ro (named pipes, Unix sockets)",
        NAMESPACE,
        LIMIT,
        "a read-only mount refuses writes to files and directories, not to a named pipe (FIFO) "
        "or a socket: a FIFO inside a read-only exposure can be opened for writing, and a Unix "
        "socket bound there after the start (or by a process of another network namespace) "
        "can be connected to; the sockets bound on this host when the sandbox starts are "
        "covered ({where})",
        python_layer=False,
        where=("the Python layer refuses them as writes", "NOT refused"),
    ),
    Limit(
        "files.skeleton-directories",
        "expose-* (the directories above an exposure)",
        TREE,
        LIMIT,
        "a directory on the way to an exposure, and the working directory when no rule exposes "
        "it, exists in the sandbox holding only the exposed entries below it: listing it shows "
        "those names ({where})",
        python_layer=False,
        where=("the Python layer refuses the listing", "NOT refused"),
    ),
    Limit(
        "files.shared-libraries",
        "defaults",
        ("landlock",),
        LIMIT,
        "the shared-library directories (/usr/lib, /lib*) and /etc/ld.so.cache are readable "
        "(the dynamic loader needs them) ({where})",
        python_layer=False,
        where=("the Python layer judges every open", "NOT narrowed"),
    ),
    Limit(
        "files.accounts",
        "defaults",
        ("landlock",),
        LIMIT,
        "/etc/passwd and /etc/group are readable whole (libc reads them for the process's own "
        "account; the Python layer lets pwd/grp look up the own entry only) ({where})",
        python_layer=False,
        where=("the Python layer judges every open", "NOT narrowed"),
    ),
    Limit(
        "files.generated-etc",
        "defaults",
        TREE,
        ENFORCED,
        "/etc/passwd, /etc/group (root and the sandbox's user), /etc/hosts (loopback, the host "
        "name, the names pinned from net= rules), /etc/resolv.conf and /etc/nsswitch.conf are "
        "written by python-sb; an expose-ro rule naming passwd or group shows the host's file "
        "instead, one naming /etc/hosts adds the host's entries after python-sb's",
    ),
    Limit(
        "files.symbolic-links",
        "expose-ro / expose-rw",
        TREE,
        ENFORCED,
        "an exposure written through a symbolic link ({rule}) exists at both names: the target "
        "is bound, the link recreated",
    ),
    Limit(
        "files.script-unreadable",
        "expose-ro",
        ("none", "subprocess", *KERNEL),
        REFUSED,
        "the script {script} is not readable under these rules: add 'expose-ro={directory}' "
        "(SPEC 5.2: the script's directory must be exposed)",
    ),
    Limit(
        "net.unix-sockets",
        "net / expose-*",
        ("landlock",),
        LIMIT,
        "socket(AF_UNIX) is refused by the seccomp filter unless landlock.unix-sockets=true "
        "(Landlock cannot restrict a socket's path); socketpair() works",
    ),
    Limit(
        "net.unix-sockets-allowed",
        "landlock.unix-sockets=true",
        ("landlock",),
        LIMIT,
        "landlock.unix-sockets=true: Landlock cannot restrict a socket's path, so a Unix socket "
        "is connected to wherever it lies, outside the exposures and in read-only ones too (a "
        "host service's: an agent, a container runtime), and a Unix server the program starts "
        "can be reached by the host's processes ({where})",
        python_layer=False,
        where=("the Python layer judges the path as a write", "NOT refused"),
    ),
    Limit(
        "net.tcp-host-part",
        "net (TCP, a host)",
        ("landlock",),
        LIMIT,
        "TCP {verb} port(s) {ports}: Landlock grants them for every host; the host part of the "
        "rule is checked by the Python layer only",
        python_layer=False,
    ),
    Limit(
        "net.tcp-host-part-refused",
        "net (TCP, a host)",
        ("landlock",),
        REFUSED,
        "{origin}: '{rule}' allows TCP only to {host}; Landlock filters TCP by port, so with "
        "py-sandbox=false it would open the port to every host",
    ),
    Limit(
        "net.tcp-deny-host",
        "net (DENY of a host)",
        ("landlock",),
        LIMIT,
        "'{rule}' ({origin}) is enforced by the Python layer only: Landlock cannot refuse a host",
        python_layer=False,
    ),
    Limit(
        "net.tcp-deny-host-refused",
        "net (DENY of a host)",
        ("landlock",),
        REFUSED,
        "{origin}: '{rule}' cannot be enforced: Landlock filters TCP by port, and port(s) "
        "{ports} are open to every host",
    ),
    Limit(
        "net.no-tcp-rules",
        "net (TCP)",
        ("landlock",),
        LIMIT,
        "this kernel's Landlock ABI {abi} cannot restrict TCP (ABI 4, Linux 6.7, needed); the "
        "Python layer enforces net= alone",
        python_layer=False,
    ),
    Limit(
        "net.no-tcp-rules-refused",
        "net (TCP)",
        ("landlock",),
        REFUSED,
        "this kernel's Landlock ABI {abi} cannot restrict TCP (ABI 4, Linux 6.7, needed); use "
        "py-sandbox=true or os-sandbox=bwrap",
    ),
    Limit(
        "net.udp",
        "net (UDP)",
        ("landlock",),
        LIMIT,
        "UDP is not restricted by the kernel (Landlock cannot filter it; needed for DNS); the "
        "Python layer judges every datagram",
        python_layer=False,
    ),
    Limit(
        "net.udp-refused",
        "net (UDP)",
        ("landlock",),
        REFUSED,
        "{origin}: '{rule}' cannot be enforced with py-sandbox=false: Landlock cannot filter "
        "UDP, which is all or nothing (allow it with net=ALLOW|UDP|*|*|OUT and no UDP DENY, or "
        "use py-sandbox=true or os-sandbox=bwrap)",
    ),
    Limit(
        "net.udp-in",
        "net (UDP IN)",
        ("landlock",),
        LIMIT,
        "UDP sockets can also receive: Landlock cannot restrict UDP IN",
        python_layer=False,
    ),
    Limit(
        "qemu.no-kvm",
        "os-sandbox",
        ("qemu",),
        LIMIT,
        "KVM cannot be used ({reason}): the VM runs under software emulation (TCG), several "
        "seconds per start",
    ),
    Limit(
        "qemu.terminal",
        "stdio",
        ("qemu",),
        LIMIT,
        "python-sb's terminal is relayed to a pseudo-terminal in the VM (isatty() is true, the "
        "VM's line discipline edits lines and turns Ctrl-C into SIGINT, the window size "
        "follows), with this terminal in raw mode meanwhile; Ctrl-Z does not suspend the "
        "program (no job control across the VM)",
    ),
    Limit(
        "net.qemu-host-loopback",
        "net (UDP OUT to the host's loopback)",
        ("qemu",),
        LIMIT,
        "UDP to a port of the host's loopback that an OUT rule allows goes to {alias} inside "
        "the VM, not to 127.0.0.1 (the guest's own; TCP ports are forwarded from it)",
    ),
    Limit(
        "net.qemu-host-ipv6-loopback",
        "net (TCP OUT to the host's ::1)",
        ("qemu",),
        LIMIT,
        "'{rule}' ({origin}): TCP to the host's ::1 is not relayed into the VM (its ports are "
        "relayed from the VM's 127.0.0.1 only): the program reaches nothing on ::1; name "
        "127.0.0.1 for a service of this host that listens on both",
    ),
    Limit(
        "net.qemu-in-loopback",
        "net (IN on loopback)",
        ("qemu",),
        LIMIT,
        "'{rule}' ({origin}): qemu forwards the port to the VM's network address ({guest}); a "
        "server the program binds to 127.0.0.1 in the VM is not reached from this host: bind "
        "0.0.0.0 (the VM has no other network)",
    ),
    Limit(
        "qemu.unix-socket-paths",
        "net / expose-rw (AF_UNIX)",
        ("qemu",),
        LIMIT,
        "a Unix socket bound to a path of the VM's files (9p shares of this host's tree, /tmp "
        "included) cannot be connected to (ENXIO): use an abstract socket (the VM is the "
        "program's own) or a path under /dev/shm",
    ),
    Limit(
        "net.host-names",
        "net (host names)",
        ("landlock",),
        LIMIT,
        "host names are not judged by Landlock: a name in this host's /etc/hosts (a default "
        "grant) resolves whatever the net= rules say, and a DNS query leaves wherever UDP or "
        "TCP port 53 is open ({where})",
        python_layer=False,
        where=("the Python layer refuses names no rule covers", "NOT refused"),
    ),
    Limit(
        "net.host-loopback-other-addresses",
        "net (OUT to a loopback network)",
        TREE,
        LIMIT,
        "'{rule}' ({origin}): this host's loopback is reached from the sandbox at 127.0.0.1 "
        "(and ::1) only: the rule's other loopback addresses (127.0.0.2 ...) reach nothing",
    ),
    Limit(
        "net.in-bind-address",
        "net (IN, a local address)",
        TREE,
        LIMIT,
        "'{rule}' ({origin}): the kernel does not check the address a server binds, so a "
        "server on port(s) {ports} bound to another address of the sandbox (0.0.0.0) is reached "
        "too, only through what the rule forwards ({where})",
        python_layer=False,
        where=("the Python layer refuses that bind", "NOT refused"),
    ),
    Limit(
        "net.in-wildcard-one-address",
        "net (IN, the wildcard bind)",
        KERNEL,
        LIMIT,
        "'{rule}' ({origin}): the kernel does not check the address a server binds, so one "
        "bound to a single address (127.0.0.1) on port(s) {ports}, rather than to every one as "
        "the rule says, is allowed too ({where})",
        python_layer=False,
        where=("the Python layer refuses that bind", "NOT refused"),
    ),
    Limit(
        "net.name-by-address",
        "net (ALLOW of a host name)",
        TREE,
        LIMIT,
        "'{rule}' ({origin}): the kernel ruleset allows the addresses the name had when the "
        "sandbox started, so the program reaches them by address too, without the name "
        "({where})",
        python_layer=False,
        where=("the Python layer allows the name only", "NOT refused"),
    ),
    Limit(
        "net.any-host-not-host-loopback",
        "net (OUT to *)",
        TREE,
        LIMIT,
        "'{rule}' ({origin}): a '*' host does not reach this host's own services on its "
        "loopback (127.0.0.1, ::1): in the sandbox 127.0.0.1 is the sandbox's own loopback; "
        "name them (net=ALLOW|TCP|127.0.0.1|PORT|OUT)",
    ),
    Limit(
        "net.in-not-a-host-address",
        "net (IN)",
        TREE,
        LIMIT,
        "'{rule}' ({origin}): the sandbox may bind {net}, but it is not an address of this "
        "host: nothing is forwarded to it, so nothing outside the sandbox reaches that server",
    ),
    Limit(
        "net.own-port-not-forwarded",
        "net (OUT to loopback, IN)",
        NAMESPACE,
        LIMIT,
        "'{rule}' ({origin}): port(s) {ports} of the host's loopback are not forwarded into "
        "the sandbox: an IN rule lets the program bind them on loopback, and there a loopback "
        "connection goes to the program's own server",
    ),
    Limit(
        "net.own-server-deny-loopback",
        "net (DENY to loopback, IN)",
        NAMESPACE,
        LIMIT,
        "'{rule}' ({origin}): inside the sandbox the loopback leads to the sandbox itself, and "
        "the kernel ruleset lets the program's own connections there through, also to port(s) "
        "{ports}, which an IN rule lets it bind on loopback; {where}",
        python_layer=False,
        where=("the Python layer refuses them", "nothing refuses them"),
    ),
    Limit(
        "net.tcp-own-server",
        "net (IN, the program's own server)",
        ("landlock",),
        LIMIT,
        "TCP connect to port(s) {ports}: granted for the program's own server (an IN rule lets "
        "it bind them{ephemeral}); Landlock filters TCP by port, not by host, so the kernel lets "
        "the program connect to them on every host; {where}",
        where=(
            "the Python layer allows such a connection only to a loopback port a socket of the "
            "program holds",
            "nothing else restricts them",
        ),
    ),
    Limit(
        "net.tcp-own-server-deny",
        "net (IN, the program's own server; DENY of a host)",
        ("landlock",),
        LIMIT,
        "'{rule}' ({origin}): Landlock cannot refuse one host, so TCP connect to port(s) {ports} "
        "is not granted for the program's own server (it would open them to every host): the "
        "program cannot connect to its own server on them",
        python_layer=False,
    ),
    Limit(
        "signals.no-scopes",
        "other processes",
        ("landlock",),
        LIMIT,
        "Landlock ABI {abi} has no scopes (ABI 6, Linux 6.12): signals to processes outside the "
        "sandbox are not refused by the kernel",
        python_layer=False,
    ),
)

_BY_KEY: Final[dict[str, Limit]] = {limit.key: limit for limit in LIMITS}


class Notice:
    """One limit as it applies to a run: its key (``None`` for a refusal a provider words
    itself), status, the sentence (fields filled), and whether a run says it at start.

    What every provider's ``announcements(policy, mode)`` gives (``providers/base.Provider``):
    the records ``--explain`` prints as text and as JSON (:meth:`to_dict`), and a run at
    start."""

    __slots__ = ("at_start", "key", "status", "text")

    def __init__(self, key: str | None, status: str, text: str, at_start: bool = False) -> None:
        self.key = key
        self.status = status
        self.text = text
        self.at_start = at_start

    def __repr__(self) -> str:
        return f"Notice({self.key!r}, {self.status!r}, {self.text!r}, {self.at_start!r})"

    def to_dict(self) -> dict[str, object]:
        """The ``--explain --json`` form: key, status, text, at_start."""

        return {
            "key": self.key,
            "status": self.status,
            "text": self.text,
            "at_start": self.at_start,
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Notice) and (self.key, self.text) == (other.key, other.text)

    def __hash__(self) -> int:
        return hash((self.key, self.text))


def notice(key: str, python_layer: bool, **fields: object) -> Notice:
    """The sentence of limit ``key`` for a run (``python_layer``: py-sandbox=true)."""

    limit = _BY_KEY[key]
    where = limit.where[0 if python_layer else 1]
    text = limit.text.format(where=where, **fields)
    return Notice(key, limit.status, text, said_at_start(key, python_layer))


def said_at_start(key: str, python_layer: bool) -> bool:
    """Whether a notice of ``key`` is printed when a run starts: every announced limit that
    holds with this Python-layer setting (limits the Python layer makes good are for
    ``--explain``); differences that are enforced are for ``--explain`` only."""

    limit = _BY_KEY[key]
    if limit.status != LIMIT:
        return False
    return limit.python_layer is None or limit.python_layer == python_layer


def acknowledge_problem(key: str) -> str | None:
    """Why ``acknowledge=key`` cannot be written, or ``None``: the key must name an announced
    limit of :data:`LIMITS` (status ``limit``, the ones a run says at start). A refusal or an
    enforced difference is never said at start, so there is nothing to acknowledge: saying so
    keeps ``acknowledge=`` from reading as if it could let a refused run start."""

    limit = _BY_KEY.get(key)
    if limit is None:
        import difflib

        near = difflib.get_close_matches(key, [k.key for k in LIMITS if k.status == LIMIT], n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        return (
            f"acknowledge={key}: no announced limit has this id{hint}; python-sb --explain "
            "shows the id of each limit a run says, docs/security-model.md lists them all"
        )
    if limit.status != LIMIT:
        what = "python-sb refuses such a run" if limit.status == REFUSED else "it is enforced"
        return (
            f"acknowledge={key}: {key} is not an announced limit ({what}): acknowledge= only "
            "stops a run from saying a limit it knows at start"
        )
    return None


def unacknowledged(warnings: list[str], keys: tuple[str, ...]) -> list[str]:
    """``warnings`` (a provider's start warnings: ``"PROVIDER...: sentence"``) without those that
    are the sentence of a limit in ``keys`` (``acknowledge=`` lines). Matched by the limit's own
    sentence, its ``{fields}`` standing for any text, so that every provider's start warnings
    are judged the same way, whatever built them."""

    if not keys:
        return warnings
    import re

    patterns = []
    for key in keys:
        limit = _BY_KEY.get(key)
        if limit is None:
            continue
        parts = re.split(r"\{[a-z_]+\}", limit.text)
        patterns.append(": " + ".*?".join(re.escape(part) for part in parts) + r"\Z")
    if not patterns:
        return warnings
    said = re.compile("|".join(f"(?:{pattern})" for pattern in patterns), re.S)
    return [warning for warning in warnings if said.search(warning) is None]


def namespace_notices(policy: Policy, provider: str) -> list[Notice]:
    """The notices of ``bwrap``/``unshare`` for ``policy`` that the rules alone decide: the
    file system's (the mount plan adds the ones that depend on the host's tree, such as links
    it could not recreate) and the network's (``netns`` adds the ones that depend on the host's
    addresses)."""

    python_layer = bool(policy.py_sandbox.value)
    found = [
        notice("files.system-trees", python_layer),
        notice("files.generated-etc", python_layer),
        notice("files.dotdot-through-absent", python_layer),
        notice("files.skeleton-directories", python_layer),
        notice("files.unexposed-absent", python_layer),
    ]
    if policy.expose_rw:
        found.append(symlink_notice(policy))
    if policy.expose_ro and provider in NAMESPACE:
        found.append(notice("files.special-read-only", python_layer))
    for rule in policy.ignore:
        found.append(
            notice("files.ignore-created-later", python_layer, rule=rule.text, origin=rule.origin)
        )
        if _may_match_system_trees(rule.path, policy):
            found.append(
                notice(
                    "files.ignore-system-trees", python_layer, rule=rule.text, origin=rule.origin
                )
            )
    for net in policy.net:
        if net.action == "ALLOW" and net.direction in ("IN", "*") and is_wildcard_bind_rule(net):
            found.append(wildcard_bind_notice(net, python_layer))
    for net in policy.net:
        if net.action == "ALLOW" and net.is_name and net.direction in ("OUT", "*"):
            if provider in EDGE_PROXIED and net.proto == "TCP" and not _loopback_name(net.host):
                continue  # the edge proxy judges the name: its address alone is refused
            found.append(
                notice("net.name-by-address", python_layer, rule=net.text, origin=net.origin)
            )
    for net in policy.net:
        if (
            net.action == "ALLOW"
            and net.direction in ("IN", "*")
            and net.host != "*"
            and (net.is_name or not _is_wildcard_address(net.host))
        ):
            found.append(
                notice(
                    "net.in-bind-address",
                    python_layer,
                    rule=net.text,
                    origin=net.origin,
                    ports=_port_text(net.ports),
                )
            )
    for net in policy.net:
        if (
            net.action == "ALLOW"
            and net.direction in ("OUT", "*")
            and not net.is_name
            and _wider_loopback(net.host)
        ):
            found.append(
                notice(
                    "net.host-loopback-other-addresses",
                    python_layer,
                    rule=net.text,
                    origin=net.origin,
                )
            )
            break  # one rule named is enough: the limit is the same for all
    for net in policy.net:
        if net.action == "ALLOW" and net.host == "*" and net.direction in ("OUT", "*"):
            found.append(
                notice(
                    "net.any-host-not-host-loopback", python_layer, rule=net.text, origin=net.origin
                )
            )
            break  # one rule named is enough: the limit is the same for all
    return found


def wildcard_bind_notice(net: NetRule, python_layer: bool) -> Notice:
    """``net.in-wildcard-one-address`` for an ``IN`` rule of the wildcard bind."""

    return notice(
        "net.in-wildcard-one-address",
        python_layer,
        rule=net.text,
        origin=net.origin,
        ports=_port_text(net.ports),
    )


def is_wildcard_bind_rule(net: NetRule) -> bool:
    """An ``IN`` rule for the wildcard bind (``0.0.0.0/32``, ``::/128``, a network around
    them but not all addresses): the Python layer refuses a bind to one address (127.0.0.1)
    under it; ``*`` (and ``/0``) grant every local address, another network is
    ``net.in-bind-address``'s."""

    if net.is_name or net.host == "*":
        return False
    import ipaddress

    try:
        network = ipaddress.ip_network(net.host, strict=False)
    except ValueError:
        return False
    return int(network.network_address) == 0 and network.prefixlen > 0


def _may_match_system_trees(pattern: str, policy: Policy) -> bool:
    """Whether an ``ignore=`` pattern could match inside a tree the namespace providers bind
    whole (they search the exposures only): a name pattern always; a path pattern whose fixed
    part lies outside every exposure."""

    if "/" not in pattern.strip().rstrip("/"):
        return True
    fixed = pattern
    for index, char in enumerate(pattern):
        if char in "*?[":
            fixed = pattern[:index]
            break
    fixed = fixed.rstrip("/") or "/"

    def under(path: str, root: str) -> bool:
        return path == root or root == "/" or path.startswith(root.rstrip("/") + "/")

    return not any(under(fixed, r.path) for r in (*policy.expose_ro, *policy.expose_rw))


def symlink_notice(policy: Policy) -> Notice:
    """``files.symlink-target`` for a policy with ``expose-rw`` rules (the first one named)."""

    from pysandboxes.policy.model import display_path

    rw = display_path(policy.expose_rw[0].path)
    more = len(policy.expose_rw) - 1
    if more:
        rw += f" (and {more} more)"
    return notice("files.symlink-target", bool(policy.py_sandbox.value), rw=rw)


def _wider_loopback(host: str) -> bool:
    """Whether an OUT rule's HOST (an address or network) holds 127.0.0.1 and more of the
    loopback network (``127.0.0.0/8``, ``127.0.0.0/24``...)."""

    import ipaddress

    try:
        net = ipaddress.ip_network(host, strict=False)
    except ValueError:
        return False
    return net.version == 4 and ipaddress.ip_address("127.0.0.1") in net and net.num_addresses > 1


def _is_wildcard_address(host: str) -> bool:
    """Whether an IN rule's HOST (an address or network) is the wildcard bind (``0.0.0.0``,
    ``::``, or a network holding it): every local address, no other bind address to check."""

    import ipaddress

    try:
        return int(ipaddress.ip_network(host, strict=False).network_address) == 0
    except ValueError:
        return False


def _port_text(ports: tuple[tuple[int, int], ...] | None) -> str:
    if ports is None:
        return "*"
    return ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in ports)


def no_enforcer(policy: Policy, mode: str) -> list[Notice]:
    """The start warning of ``none`` and ``subprocess`` enforcing with ``py-sandbox=false``
    when the rules hold anything but ``env=``: nothing enforces those rules then, and such a
    run says so rather than looking like an enforcing one (DESIGN decision 1: never widen
    silently). Learning and audit runs say at start that they enforce nothing; a rule file
    with only settings and ``env=`` lines (python-sb as a plain launcher) loses nothing."""

    if policy.py_sandbox.value or mode != "enforce":
        return []
    kinds = [
        key
        for key, rules in (
            ("expose-ro", policy.expose_ro),
            ("expose-rw", policy.expose_rw),
            ("ignore", policy.ignore),
            ("net", policy.net),
            ("python-import", policy.python_import),
            ("python-api", policy.python_api),
            ("eval-*", policy.eval_rules),
        )
        if rules
    ]
    if not kinds:
        return []
    return [notice("all.no-enforcer", False, kinds=", ".join(kinds))]


def check_script(policy: Policy, script: str, read_roots: tuple[str, ...]) -> Notice | None:
    """Issue 11, point 8: one behaviour under every provider. The refusal to give before
    anything runs when the rules do not let the sandbox read the script
    (``policy/decide.script_readable``), else ``None``."""

    from pysandboxes.policy.decide import script_readable

    return None if script_readable(policy, script, read_roots) else unreadable_script(script)


def unreadable_script(script: str) -> Notice:
    """The refusal of a script the rules do not let the sandbox read (``check_script``)."""

    import os

    from pysandboxes.policy.model import display_path

    directory = display_path(os.path.dirname(os.path.abspath(script)))
    if directory == ".":
        shown_dir = "."
    elif directory.startswith(("/", "~")):
        shown_dir = directory
    else:
        shown_dir = "./" + directory
    return notice(
        "files.script-unreadable",
        True,
        script=display_path(os.path.abspath(script)),
        directory=shown_dir,
    )


def markdown_table() -> str:
    """The table of ``docs/security-model.md`` ("Announced limits")."""

    rows = [
        "| key | rule kind | providers | status | with the Python layer |",
        "| --- | --- | --- | --- | --- |",
    ]
    for limit in LIMITS:
        layer = "either way" if limit.python_layer is None else "made good by it"
        if limit.where != ("", ""):
            layer = f"{limit.where[0]} (off: {limit.where[1]})"
        rows.append(
            f"| `{limit.key}` | {limit.kind} | {', '.join(limit.providers)} | {limit.status} "
            f"| {layer} |"
        )
    return "\n".join(rows) + "\n"
