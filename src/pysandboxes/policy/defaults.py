"""What every enforcer grants without a rule: the ONE list of default grants (DESIGN decision 1).

A rule file says what a program may use beyond these. The Python layer (``guard/files.py``), the
``landlock`` provider and the namespace providers (``bwrap``, ``unshare``: ``_ns_mounts.py``)
all take their defaults from :data:`GRANTS`, so that what one enforcer grants by default the
others grant too, and nothing more.

Each :class:`Grant` says what it is for, whether it is read-only or read-write, and who grants
it (:attr:`Grant.scope`):

- ``every``: the Python layer and every kernel provider. Under ``bwrap``/``unshare`` a path
  below ``/etc`` is bound from the host one by one (a path below ``/usr`` is inside the
  ``/usr`` tree they hold anyway); the devices are nodes of the sandbox's own ``/dev``.
- ``kernel``: the kernel providers only, because a library reads the file on the program's
  behalf (libc's account lookups) where the Python layer judges the *function* instead (``pwd``
  looks up the process's own entry without a rule). What a kernel provider shows there is
  listed in :attr:`Grant.namespace` (``generated``: a file python-sb writes, not the host's).
- ``landlock`` / ``namespace``: what one kind of kernel provider needs to run a program at all
  (the dynamic loader and shared libraries; a namespace sandbox's system trees and ``/dev``),
  which the program cannot reach through the Python layer anyway. Justified entry by entry.

Certificate stores are certificates only: ``/etc/ssl/private`` (private keys) is never a
default, under any enforcer.

``docs/rules.md`` ("Default grants") holds :func:`markdown_table`'s output; a unit test keeps
the two equal.

This module is on the start-up path of every run (the guard imports it): plain tuples and a
slotted class, no ``typing`` at run time.
"""

from __future__ import annotations

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Final

RO: Final = "ro"
RW: Final = "rw"

#: ``Grant.namespace`` values: how ``bwrap``/``unshare`` provide the entry.
HOST = "host"  # the host's file, bound read-only (read-write for RW entries)
GENERATED = "generated"  # a file python-sb writes for the sandbox
DEVICE = "device"  # a node of the sandbox's own /dev
ABSENT = "absent"  # not provided


class Grant:
    """One default grant: ``paths`` (missing ones are skipped), ``access`` (``ro``/``rw``),
    ``scope`` (see the module docstring), ``purpose`` (why a program needs it) and
    ``namespace`` (how the namespace providers provide it)."""

    __slots__ = ("access", "name", "namespace", "paths", "purpose", "scope")

    def __init__(
        self,
        name: str,
        paths: tuple[str, ...],
        access: str,
        scope: str,
        purpose: str,
        namespace: str = HOST,
    ) -> None:
        self.name = name
        self.paths = paths
        self.access = access
        self.scope = scope
        self.purpose = purpose
        self.namespace = namespace

    def __repr__(self) -> str:
        return f"Grant({self.name!r}, {self.access}, {self.scope})"


#: TLS trust stores: certificates only (not /etc/ssl/private).
CERTIFICATES = Grant(
    "certificates",
    (
        "/etc/ssl/certs",
        "/etc/ssl/cert.pem",
        "/etc/pki/tls/certs",
        "/etc/pki/tls/cert.pem",
        "/etc/pki/ca-trust",
        "/etc/ca-certificates",
        "/usr/share/ca-certificates",
        "/usr/local/share/ca-certificates",
        "/usr/lib/ssl/certs",
        "/usr/lib/ssl/cert.pem",
    ),
    RO,
    "every",
    "TLS certificate stores (ssl.create_default_context, urllib, httpx); never /etc/ssl/private",
)
OPENSSL_CONFIG = Grant(
    "openssl-config",
    (
        "/etc/ssl/openssl.cnf",
        "/usr/lib/ssl/openssl.cnf",
        "/etc/pki/tls/openssl.cnf",
        "/etc/crypto-policies",
    ),
    RO,
    "every",
    "OpenSSL's configuration, read by libssl when the ssl module starts",
)
TIMEZONES = Grant(
    "timezones",
    ("/etc/localtime", "/etc/timezone", "/usr/share/zoneinfo"),
    RO,
    "every",
    "time-zone data (zoneinfo, time.localtime)",
)
MIME_TYPES = Grant(
    "mime-types",
    (
        "/etc/mime.types",
        "/etc/httpd/mime.types",
        "/etc/httpd/conf/mime.types",
        "/etc/apache/mime.types",
        "/etc/apache2/mime.types",
        "/usr/local/etc/httpd/conf/mime.types",
        "/usr/local/lib/netscape/mime.types",
        "/usr/local/etc/mime.types",
    ),
    RO,
    "every",
    "mimetypes (and http.server) read every one that exists, and fail if one cannot be read",
)
OS_RELEASE = Grant(
    "os-release",
    ("/etc/os-release", "/usr/lib/os-release"),
    RO,
    "every",
    "platform.freedesktop_os_release()",
)
INPUTRC = Grant(
    "inputrc",
    ("/etc/inputrc",),
    RO,
    "every",
    "readline's system init file (the REPL, input())",
)
NAME_SERVICE = Grant(
    "name-service",
    (
        "/etc/resolv.conf",
        "/etc/hosts",
        "/etc/nsswitch.conf",
        "/etc/host.conf",
        "/etc/gai.conf",
        "/etc/services",
        "/etc/protocols",
    ),
    RO,
    "every",
    "name resolution (getaddrinfo, getservbyname); bwrap/unshare generate resolv.conf, hosts "
    "and nsswitch.conf (their own resolver and the names pinned from net= rules)",
)
DEVICES_RW = Grant(
    "devices",
    ("/dev/null", "/dev/zero", "/dev/full"),
    RW,
    "every",
    "the data sinks and sources every program may use",
    DEVICE,
)
DEVICES_RANDOM = Grant(
    "random",
    ("/dev/urandom", "/dev/random"),
    RW,
    "every",
    "random numbers (os.urandom falls back to them); writable, as for any user: writing only "
    "mixes data into the entropy pool (crediting entropy needs a privilege no sandbox has)",
    DEVICE,
)
ACCOUNTS = Grant(
    "accounts",
    ("/etc/passwd", "/etc/group"),
    RO,
    "kernel",
    "libc reads them for the process's own account (getpass.getuser(), ~ without HOME); the "
    "Python layer lets pwd/grp look up the own entry only and judges open() by the rules; "
    "landlock grants the host's files whole, bwrap/unshare generate them (root and the "
    "sandbox's user) unless an expose-ro rule names them",
    GENERATED,
)
OWN_PROC = Grant(
    "own-proc",
    ("/proc/self",),
    RO,
    "every",
    "the process's own /proc entry (the interpreter, subprocess's close_fds, /proc/self/status "
    "and friends); the Python layer grants /proc/PID of the process it guards (a link found "
    "there, /proc/self/root or a descriptor's /proc/self/fd/N, is judged where it lands), "
    "landlock /proc/PID of the program, bwrap/unshare mount a /proc of the sandbox's PID "
    "namespace",
    "proc",
)
LOADER = Grant(
    "loader",
    (
        "/etc/ld.so.cache",
        "/etc/ld.so.preload",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/usr/lib",
        "/usr/lib32",
        "/usr/lib64",
        "/usr/libx32",
        "/usr/local/lib",
    ),
    RO,
    "landlock",
    "the dynamic loader and shared libraries (read and mapped executable) for the interpreter "
    "and its extension modules; the Python layer cannot stop the loader either",
)
SYSTEM_TREES = Grant(
    "system-trees",
    ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"),
    RO,
    "namespace",
    "the system's programs, libraries and their data (/usr/share), read-only, so that the "
    "sandbox can run the interpreter and child programs; links such as /bin -> usr/bin are "
    "recreated as links",
)
NAMESPACE_ETC = Grant(
    "system-etc",
    ("/etc/ld.so.cache", "/etc/alternatives"),
    RO,
    "namespace",
    "the loader's cache and the alternatives that /usr/bin links point to",
)
NAMESPACE_DEV = Grant(
    "sandbox-dev",
    ("/dev/tty", "/dev/pts", "/dev/ptmx", "/dev/shm", "/dev/fd"),
    RW,
    "namespace",
    "the sandbox's own /dev: /dev/tty (unusable: new session, no controlling terminal), a new "
    "devpts instance, an empty private /dev/shm, /dev/fd -> /proc/self/fd",
    DEVICE,
)
HOSTNAME = Grant(
    "hostname",
    ("/etc/hostname",),
    RO,
    "namespace",
    "the sandbox's own host name (bwrap.hostname=, unshare.hostname=)",
    GENERATED,
)

#: Every default grant, in the order the docs list them.
GRANTS: Final[tuple[Grant, ...]] = (
    CERTIFICATES,
    OPENSSL_CONFIG,
    TIMEZONES,
    MIME_TYPES,
    OS_RELEASE,
    INPUTRC,
    NAME_SERVICE,
    DEVICES_RW,
    DEVICES_RANDOM,
    ACCOUNTS,
    OWN_PROC,
    LOADER,
    SYSTEM_TREES,
    NAMESPACE_ETC,
    NAMESPACE_DEV,
    HOSTNAME,
)


def _paths(scopes: tuple[str, ...], access: str | None = None) -> tuple[str, ...]:
    out: list[str] = []
    for grant in GRANTS:
        if grant.scope in scopes and (access is None or grant.access == access):
            out.extend(p for p in grant.paths if p not in out)
    return tuple(out)


def python_layer_paths(access: str) -> tuple[str, ...]:
    """What the Python layer grants by default with ``access`` (``ro``/``rw``)."""

    return _paths(("every",), access)


def landlock_paths() -> tuple[tuple[str, str, str], ...]:
    """``(path, access, purpose)`` for every default the ``landlock`` provider grants (the
    process's own /proc entry excepted: its PID is known only when the rules are applied)."""

    out: list[tuple[str, str, str]] = []
    for grant in GRANTS:
        if grant.scope in ("every", "kernel", "landlock") and grant.namespace != "proc":
            out.extend((path, grant.access, grant.name) for path in grant.paths)
    return tuple(out)


def namespace_etc() -> tuple[str, ...]:
    """Names below ``/etc`` that ``bwrap``/``unshare`` bind from the host (read-only), the
    generated files (:data:`GENERATED_ETC`) excepted. Entries below ``/usr`` are in the /usr
    tree already."""

    out: list[str] = []
    for grant in GRANTS:
        if grant.scope not in ("every", "namespace") or grant.namespace != HOST:
            continue
        for path in grant.paths:
            if path.startswith("/etc/"):
                name = path[len("/etc/") :]
                if name not in GENERATED_ETC and name not in out:
                    out.append(name)
    return tuple(out)


#: /etc files the namespace providers write themselves (never bound from the host unless a rule
#: exposes them: see ``_ns_mounts``).
GENERATED_ETC: Final = ("passwd", "group", "hosts", "resolv.conf", "nsswitch.conf", "hostname")


def namespace_devices() -> tuple[str, ...]:
    """Device nodes (names below /dev) the namespace providers create in the sandbox's /dev."""

    names: list[str] = []
    for grant in (DEVICES_RW, DEVICES_RANDOM):
        names.extend(path[len("/dev/") :] for path in grant.paths)
    names.append("tty")
    return tuple(names)


_SCOPE_TEXT = {
    "every": "every enforcer",
    "kernel": "kernel providers",
    "landlock": "landlock only",
    "namespace": "bwrap, unshare only",
}


def markdown_table() -> str:
    """The "Default grants" table of ``docs/rules.md`` (a test checks the doc against it)."""

    rows = [
        "| grant | paths (missing ones skipped) | access | granted by | what for |",
        "| --- | --- | --- | --- | --- |",
    ]
    for grant in GRANTS:
        paths = ", ".join(f"`{p}`" for p in grant.paths)
        access = "read-write" if grant.access == RW else "read-only"
        if grant.namespace == GENERATED:
            access += " (generated under bwrap/unshare)"
        rows.append(
            f"| {grant.name} | {paths} | {access} | {_SCOPE_TEXT[grant.scope]} | {grant.purpose} |"
        )
    return "\n".join(rows) + "\n"
