"""The conformance table: (rule fragment, program, expected outcome) cases, as data.

Each row is one case: the rules it adds to the base rules, the probe operation it runs
(``probe.py``), and the outcome the rules give it, **from the rules' meaning** (SPEC §2 to §5 and
issue 11: one meaning per rule), never from what an enforcer happens to do. Every case runs under
every configuration of :data:`CONFIGS`, plus a control under plain python3 that must reach the
objective (otherwise the case proves nothing).

A provider's documented limit is listed by name in ``limits`` (see :data:`LIMITS`): in the
configurations it covers, the limit's outcome is accepted instead of the rules' one, *provided the
limit is announced at start* (a ``python-sb`` line before the program's output, or a warning of
``--explain --json``). Currently failing cells are not marked here but in ``known.py``.

Placeholders, replaced per cell: ``{T}`` the cell's tree (see ``harness.build_tree``), ``{P}``
and ``{Q}`` two ports (host servers for OUT cases, free ports for IN cases), ``{NAME}`` a host
name ``/etc/hosts`` maps to 127.0.0.1 only, ``{STDLIB}`` the interpreter's standard library,
``{U}`` a name of the cell's own for the host's ``/tmp``, ``{HOSTPID}`` a host process of the
same user (the test's own). The ``remote`` cases (host names through the edge proxy, issue 32)
run against another machine (``remote.py``: a network namespace on a veth pair): ``{P}`` and
``{Q}`` are its HTTPS and HTTP ports, ``{G}`` and ``{R}`` the addresses of ``granted.test`` and
``refused.test``, which the cell's ``/etc/hosts`` names.
"""

from __future__ import annotations

from typing import NamedTuple

ALLOWED = "allowed"
REFUSED = "refused"
#: python-sb refused the configuration and ran nothing (exit status 2, its own message).
NOT_RUN = "not-run"

#: Configuration id -> (os-sandbox, py-sandbox).
CONFIGS: dict[str, tuple[str, bool]] = {
    "none-py": ("none", True),
    "subprocess-py": ("subprocess", True),
    "landlock": ("landlock", False),
    "landlock-py": ("landlock", True),
    "bwrap": ("bwrap", False),
    "bwrap-py": ("bwrap", True),
    "unshare": ("unshare", False),
    "unshare-py": ("unshare", True),
    # The VM: each cell boots one (seconds under TCG), so test_matrix.py runs a subset of the
    # cases under them unless PYSANDBOXES_QEMU_ALL=1.
    "qemu": ("qemu", False),
    "qemu-py": ("qemu", True),
}
#: The entry-point columns (issue 24 item 8): the case's operation as a ``@sandbox`` function in
#: a partial-mode worker (``probe.py --worker``), with the Python layer on -> the command line's
#: configuration it is held to (the same expected outcome, the same limits: a worker cell that
#: differs from the command line's cell of its provider fails).
WORKER_CONFIGS: dict[str, str] = {
    "worker-subprocess": "subprocess-py",
    "worker-landlock": "landlock-py",
    "worker-bwrap": "bwrap-py",
    "worker-unshare": "unshare-py",
}


#: Guarded evaluation's column: the case's operation as source evaluated by ``guarded_eval`` in
#: its worker (an ``eval-worker``, ``probe.py --eval``) -> the command line's configuration it is
#: held to. One provider: the eval worker starts by the same path as every worker (the four
#: worker columns above), what this column adds is the eval protocol and its rule file.
EVAL_CONFIGS: dict[str, str] = {"eval-landlock": "landlock-py"}
#: The operations evaluated source performs (``probe.EVAL_OPS``): imports only, since the eval-*
#: language grants evaluated code nothing that reaches files, the network or the environment
#: (``open``, ``os``, ``socket`` cannot be granted to it: docs/eval.md).
EVAL_OPS = ("import",)


def runs_in_eval(case: Case) -> bool:
    """Whether a case applies to guarded evaluation's worker: one of :data:`EVAL_OPS`, whose
    rules ``rules=`` can carry as they are (no ``include``, no variable, no ``~`` nor relative
    path: the worker's rule file is written elsewhere, and ``rules=`` expands nothing), not
    learned (a learned file includes the profiles), and that applies to a worker at all."""

    def portable(rule: str) -> bool:
        key, _, value = rule.partition("=")
        if rule.startswith("include") or "$" in rule or "~" in rule:
            return False
        return key not in ("expose-ro", "expose-rw") or value.startswith("{T}")

    return (
        runs_in_a_worker(case)
        and case.op[0] in EVAL_OPS
        and not case.learned
        and case.cwd == "{T}/work"
        and all(portable(rule) for rule in case.rules)
        and all(not w.startswith(("./", "../")) for w in case.op[1:])
    )


def runs_in_a_worker(case: Case) -> bool:
    """Whether a case applies to a worker: not one about the program's own script (a worker
    has none: the probe's directory unexposed), nor one whose host side talks to the program's
    standard input (a worker's is ``/dev/null``: its stdio belongs to the caller)."""

    return case.script_exposed and case.host != "create-after-start"


#: The configurations whose files are the namespace providers' mount plan and whose net= rules
#: are the ruleset of netns.py (qemu exports that tree to its guest and runs its network in
#: that namespace): they share these limits.
NAMESPACES = ("bwrap", "bwrap-py", "unshare", "unshare-py", "qemu", "qemu-py")
QEMU = ("qemu", "qemu-py")


class Limit(NamedTuple):
    """A documented limit of some configurations: their outcome for the cases that list it, and
    the words (all, case-insensitive) one announcement line must hold."""

    configs: tuple[str, ...]
    outcome: str
    announce: tuple[str, ...]
    doc: str


LIMITS: dict[str, Limit] = {
    "landlock-net-host": Limit(
        ("landlock",),
        NOT_RUN,
        ("landlock", "cannot enforce"),
        "providers/landlock.md: a host in an ALLOW or a DENY beside an ALLOW is refused at start "
        "with py-sandbox=false (Landlock filters TCP by port only)",
    ),
    "landlock-udp": Limit(
        ("landlock",),
        NOT_RUN,
        ("landlock", "cannot enforce"),
        "providers/landlock.md: a UDP rule narrower than ALLOW|UDP|*|*|OUT is refused at start "
        "with py-sandbox=false (seccomp makes UDP all or nothing)",
    ),
    "landlock-ignore": Limit(
        ("landlock",),
        ALLOWED,
        ("ignore=", "not enforced"),
        "providers/landlock.md: ignore= is not enforced with py-sandbox=false, said at start",
    ),
    "landlock-rule-file": Limit(
        ("landlock",),
        ALLOWED,
        ("rule file", "not protected"),
        "providers/landlock.md: a rule file inside an expose-rw directory is not protected with "
        "py-sandbox=false, said at start",
    ),
    "landlock-nested-ro": Limit(
        ("landlock", "landlock-py"),
        REFUSED,
        ("lies below", "no entry can be created"),
        "providers/landlock.md, limits.py files.nested-read-only: with an expose-ro below an "
        "expose-rw, no entry can be created, removed or renamed directly in the writable "
        "directories above it (said at start)",
    ),
    "landlock-exec": Limit(
        ("landlock", "landlock-py"),
        REFUSED,
        ("landlock", "child programs", "expose their directory"),
        "issue 11 (announced limits): landlock needs the executables' directories exposed to run "
        "programs (expose-ro=/usr/bin)",
    ),
    "landlock-unix": Limit(
        ("landlock", "landlock-py"),
        REFUSED,
        ("unix", "landlock.unix-sockets"),
        "issue 11 (announced limits), providers/landlock.md: AF_UNIX sockets are refused unless "
        "landlock.unix-sockets=true",
    ),
    "ns-star-loopback": Limit(
        NAMESPACES,
        REFUSED,
        ("loopback",),
        "network.md: a rule for any host (*) does not reach the host's own loopback services "
        "under bwrap/unshare (issue 11: to be announced at start)",
    ),
    "ns-ignore-later": Limit(
        ("bwrap", "unshare", "qemu"),
        ALLOWED,
        ("ignore=", "created later", "not hidden"),
        "providers/bwrap.md: files created after the start that match ignore= are not hidden "
        "by the kernel layer (issue 11: to be announced at start)",
    ),
    "ns-system-trees": Limit(
        ("bwrap", "unshare", "qemu"),
        ALLOWED,
        ("/usr", "readable whole"),
        "providers/bwrap.md: /usr and /lib* are mounted whole (the system trees programs run "
        "from), said at start with py-sandbox=false",
    ),
    "ns-dotdot-absent": Limit(
        NAMESPACES,
        REFUSED,
        ("does not resolve", "'..'"),
        "providers/bwrap.md, security-model.md: under bwrap/unshare a path through a directory "
        "the sandbox does not hold does not resolve (the kernel walks '..' physically); "
        "--explain says so (files.dotdot-through-absent)",
    ),
    "landlock-metadata": Limit(
        ("landlock",),
        ALLOWED,
        ("file metadata", "not restricted by landlock", "read-only exposures"),
        "providers/landlock.md, limits.py files.metadata: chmod, chown, utime are not "
        "restricted by Landlock (said at start with py-sandbox=false)",
    ),
    "kernel-symlink-target": Limit(
        ("landlock", "bwrap", "unshare", "qemu"),
        ALLOWED,
        ("symbolic link", "not refused by the kernel"),
        "security-model.md, limits.py files.symlink-target: with py-sandbox=false the kernel "
        "lets a link to any target be created in a writable exposure (said at start)",
    ),
    "ns-unexposed-absent": Limit(
        NAMESPACES,
        REFUSED,
        ("does not exist in the sandbox", "metadata"),
        "providers/bwrap.md, limits.py files.unexposed-absent: a path no rule exposes does not "
        "exist under bwrap/unshare/qemu (ENOENT for stat too), where the Python layer and "
        "landlock show its metadata (security-model.md); --explain says so",
    ),
    "ns-skeleton-dirs": Limit(
        ("bwrap", "unshare", "qemu"),
        ALLOWED,
        ("holding only the exposed entries", "listing it shows"),
        "providers/bwrap.md, limits.py files.skeleton-directories: a directory on the way to an "
        "exposure (and an unexposed working directory) exists, holding only the exposed "
        "entries; listing it is not refused with py-sandbox=false (said at start)",
    ),
    "ns-generated-etc": Limit(
        NAMESPACES,
        REFUSED,
        ("/etc/hosts (loopback", "written by python-sb"),
        "rules.md §2.2a, limits.py files.generated-etc: bwrap/unshare/qemu show python-sb's own "
        "/etc/hosts (loopback, the host name, pinned names), not the host's; --explain says so",
    ),
    "ns-loopback-other-addresses": Limit(
        NAMESPACES,
        REFUSED,
        ("reached from the sandbox at 127.0.0.1", "other loopback addresses"),
        "network.md, limits.py net.host-loopback-other-addresses: the host's loopback is "
        "forwarded at 127.0.0.1 and ::1 only (said at start)",
    ),
    "ns-in-bind-address": Limit(
        ("bwrap", "unshare", "qemu"),
        ALLOWED,
        ("does not check the address a server binds",),
        "providers/bwrap.md, limits.py net.in-bind-address: with py-sandbox=false a server bound "
        "to another local address than an IN rule's is reached, through the rule's forward "
        "only (said at start)",
    ),
    "kernel-in-wildcard-one-address": Limit(
        ("landlock", "bwrap", "unshare", "qemu"),
        ALLOWED,
        ("does not check the address a server binds", "rather than to every one"),
        "limits.py net.in-wildcard-one-address (issue 24, item 7): with py-sandbox=false a "
        "server bound to one address under an IN rule of the wildcard bind is allowed (said "
        "at start)",
    ),
    "ns-name-by-address": Limit(
        ("bwrap", "unshare", "qemu"),
        ALLOWED,
        ("reaches them by address too",),
        "limits.py net.name-by-address (issue 24, item 7): the ruleset allows the addresses a "
        "name had at start, so with py-sandbox=false they are reached by address too (said "
        "at start)",
    ),
    "ns-ignore-system-trees": Limit(
        ("bwrap", "unshare", "qemu"),
        ALLOWED,
        ("are not searched", "stays readable"),
        "limits.py files.ignore-system-trees (issue 24, item 7): ignore= is applied to the "
        "exposed trees and the /etc entries bound one by one, not inside the trees bound whole "
        "(/usr, the interpreter's installation): said at start with py-sandbox=false",
    ),
    "landlock-loader": Limit(
        ("landlock",),
        ALLOWED,
        ("/etc/ld.so.cache", "are readable"),
        "providers/landlock.md, limits.py files.shared-libraries: the loader's files are "
        "readable with py-sandbox=false (said at start)",
    ),
    "landlock-names": Limit(
        ("landlock",),
        ALLOWED,
        ("host names are not judged",),
        "providers/landlock.md, limits.py net.host-names: with py-sandbox=false a name of the "
        "host's /etc/hosts resolves whatever the rules say (said at start)",
    ),
    "landlock-tcp-host-part": Limit(
        ("landlock-py",),
        ALLOWED,
        ("landlock grants them for every host", "checked by the python layer only"),
        "providers/landlock.md, network.md (the edge proxy under landlock), limits.py "
        "net.tcp-host-part: Landlock filters TCP by port, so a client the Python layer does not "
        "see (a child) that ignores the proxy variables reaches any host on a rule's ports "
        "(--explain: 'Landlock grants them for every host')",
    ),
    "qemu-udp-host-loopback": Limit(
        QEMU,
        REFUSED,
        ("udp", "10.0.2.2"),
        "providers/qemu.md, limits.py net.qemu-host-loopback: in the VM, UDP to the host's "
        "loopback goes to 10.0.2.2 (127.0.0.1 is the VM's own; TCP ports are relayed from it)",
    ),
    "qemu-ipv6-host-loopback": Limit(
        QEMU,
        REFUSED,
        ("::1", "not relayed into the vm"),
        "providers/qemu.md, limits.py net.qemu-host-ipv6-loopback: the host's loopback ports "
        "are relayed from the VM's 127.0.0.1 only (said at start)",
    ),
    "qemu-in-loopback": Limit(
        QEMU,
        REFUSED,
        ("127.0.0.1", "not reached"),
        "providers/qemu.md, limits.py net.qemu-in-loopback: an IN port is forwarded to the VM's "
        "network address, so a server bound to the VM's 127.0.0.1 is not reached from the host",
    ),
    "qemu-unix-socket-paths": Limit(
        QEMU,
        REFUSED,
        ("unix socket", "cannot be connected"),
        "providers/qemu.md, limits.py qemu.unix-socket-paths: a Unix socket bound on the VM's "
        "9p-shared files cannot be connected to (ENXIO)",
    ),
    "python-layer-children": Limit(
        ("none-py", "subprocess-py"),
        ALLOWED,
        ("no kernel boundary",),
        "SPEC §0, providers/subprocess.md: the Python layer does not follow a child process "
        "(--explain: 'no kernel boundary')",
    ),
}


class Case(NamedTuple):
    """One row of the table (see the module docstring)."""

    id: str
    rules: tuple[str, ...]
    op: tuple[str, ...]
    expect: str
    why: str
    limits: tuple[str, ...] = ()
    #: Host side of the run: ``tcp-servers``/``udp-servers`` (OUT targets on {P} and {Q}),
    #: ``tcp-client``/``udp-client`` (reach the program's server on the port of op[-1]),
    #: ``create-after-start`` (create op[-1] once the program is READY), ``remote`` (the
    #: remote host of ``remote.py``, its names in the cell's ``/etc/hosts``).
    host: str = ""
    cwd: str = "{T}/work"
    config: str = "{T}/rules.py-sandboxes"
    #: False: the probe's directory is not exposed by the base rules.
    script_exposed: bool = True
    #: Meaningful only for the Python layer (imports): run under py-sandbox=true only.
    python_only: bool = False
    #: Learned then replayed: learn once (``--learn``) with ``rules`` as the only rules given,
    #: then replay the learned file under each configuration.
    learned: bool = False
    #: Host paths the objective needs (the control fails otherwise).
    needs: tuple[str, ...] = ()
    #: ``NAME=value`` items (``;``-separated) set for the control only, when the objective is
    #: a value the rules give (a literal, a default) that the host environment does not hold.
    control_env: str = ""


def _case(
    id: str, rules: str, op: str, expect: str, why: str, **more: object
) -> Case:  # a row, written compactly: rules separated by ';', op words by blanks
    parts = tuple(r.strip() for r in rules.split(";") if r.strip())
    return Case(id, parts, tuple(op.split()), expect, why, **more)  # type: ignore[arg-type]


A, R = ALLOWED, REFUSED
RO, RW = "expose-ro={T}/ro", "expose-rw={T}/rw"
EXEC = "python-api=ALLOW:process-exec"
RO_IN_RW = f"{RW}; expose-ro={{T}}/rw/ro_sub"
RO_FILE_IN_RW = f"{RW}; expose-ro={{T}}/rw/ro_file.txt"
RW_IN_RO = "expose-ro={T}/ro2; expose-rw={T}/ro2/rw_sub"
LL_HOST = ("landlock-net-host",)
EDGE_GRANT = "net=ALLOW|TCP|granted.test|{P}|OUT"

CASES: list[Case] = [
    # -- files: read-only and read-write exposures (SPEC §3.1, §2.5) ---------------------------
    _case("files/ro-read", RO, "read {T}/ro/file.txt", A, "expose-ro grants reading"),
    _case("files/ro-list", RO, "list {T}/ro", A, "expose-ro grants listing"),
    _case("files/ro-write", RO, "write {T}/ro/file.txt", R, "expose-ro grants no write"),
    _case("files/ro-create", RO, "create {T}/ro/new.txt", R, "expose-ro grants no creation"),
    _case("files/ro-mkdir", RO, "mkdir {T}/ro/newdir", R, "expose-ro grants no creation"),
    _case("files/ro-remove", RO, "remove {T}/ro/file.txt", R, "expose-ro grants no removal"),
    _case("files/ro-rename", RO, "rename {T}/ro/file.txt {T}/ro/moved.txt", R, "no write"),
    _case("files/rw-read", RW, "read {T}/rw/file.txt", A, "expose-rw grants reading"),
    _case("files/rw-write", RW, "write {T}/rw/file.txt", A, "expose-rw grants writing"),
    _case("files/rw-create", RW, "create {T}/rw/new.txt", A, "expose-rw grants creation"),
    _case("files/rw-mkdir", RW, "mkdir {T}/rw/newdir", A, "expose-rw grants creation"),
    _case("files/rw-remove", RW, "remove {T}/rw/file.txt", A, "expose-rw grants removal"),
    _case("files/rw-rename", RW, "rename {T}/rw/file.txt {T}/rw/moved.txt", A, "rw rename"),
    _case("files/outside-read", RO, "read {T}/outside/secret.txt", R, "nothing exposes it"),
    _case("files/outside-list", RO, "list {T}/outside", R, "nothing exposes it"),
    _case("files/outside-write", RW, "write {T}/outside/secret.txt", R, "nothing exposes it"),
    _case("files/outside-create", RW, "create {T}/outside/new.txt", R, "nothing exposes it"),
    _case(
        "files/rename-out-of-rw",
        RW,
        "rename {T}/rw/file.txt {T}/outside/stolen.txt",
        R,
        "the target directory is not exposed",
    ),
    _case(
        "files/rename-into-rw",
        RW,
        "rename {T}/outside/secret.txt {T}/rw/got.txt",
        R,
        "the source is not exposed",
    ),
    _case("files/home-read", "", "read {T}/home/.netrc", R, "HOME is not exposed by default"),
    _case(
        "files/etc-shadow", "", "read /etc/shadow", R, "not a default grant", needs=("/etc/shadow",)
    ),
    _case("files/tmpdir-write", "", "tmpwrite", A, "the private TMPDIR is writable (SPEC §3.1)"),
    # -- ro nested under rw: a directory (issue 11 point 1) -----------------------------------
    _case("files/ro-dir-in-rw-read", RO_IN_RW, "read {T}/rw/ro_sub/inner.txt", A, "ro still reads"),
    _case(
        "files/ro-dir-in-rw-write",
        RO_IN_RW,
        "write {T}/rw/ro_sub/inner.txt",
        R,
        "the longest exposed prefix (expose-ro) decides",
    ),
    _case(
        "files/ro-dir-in-rw-create",
        RO_IN_RW,
        "create {T}/rw/ro_sub/new.txt",
        R,
        "the longest exposed prefix (expose-ro) decides",
    ),
    _case(
        "files/ro-dir-in-rw-mkdir",
        RO_IN_RW,
        "mkdir {T}/rw/ro_sub/newdir",
        R,
        "the longest exposed prefix (expose-ro) decides",
    ),
    _case(
        "files/ro-dir-in-rw-remove",
        RO_IN_RW,
        "remove {T}/rw/ro_sub/inner.txt",
        R,
        "the longest exposed prefix (expose-ro) decides",
    ),
    _case(
        "files/ro-dir-in-rw-rename-out",
        RO_IN_RW,
        "rename {T}/rw/ro_sub/inner.txt {T}/rw/moved.txt",
        R,
        "moving a file out of a read-only directory writes that directory",
    ),
    _case("files/ro-dir-in-rw-sibling", RO_IN_RW, "write {T}/rw/file.txt", A, "the rest stays rw"),
    # -- ro nested under rw: a single file (issue 11 point 1) ---------------------------------
    _case("files/ro-file-in-rw-read", RO_FILE_IN_RW, "read {T}/rw/ro_file.txt", A, "ro reads"),
    _case(
        "files/ro-file-in-rw-write",
        RO_FILE_IN_RW,
        "write {T}/rw/ro_file.txt",
        R,
        "the longest exposed prefix (the file, expose-ro) decides",
    ),
    _case(
        "files/ro-file-in-rw-remove",
        RO_FILE_IN_RW,
        "remove {T}/rw/ro_file.txt",
        R,
        "the file is read-only: removing it is a write of it",
    ),
    _case(
        "files/ro-file-in-rw-replace",
        RO_FILE_IN_RW,
        "rename {T}/rw/file.txt {T}/rw/ro_file.txt",
        R,
        "renaming over a read-only file replaces it",
    ),
    # -- rw nested under ro --------------------------------------------------------------------
    _case("files/rw-in-ro-write", RW_IN_RO, "write {T}/ro2/rw_sub/data.txt", A, "longest prefix"),
    _case("files/rw-in-ro-create", RW_IN_RO, "create {T}/ro2/rw_sub/new.txt", A, "longest prefix"),
    _case("files/rw-in-ro-outer-write", RW_IN_RO, "write {T}/ro2/other.txt", R, "outer stays ro"),
    _case("files/rw-in-ro-outer-create", RW_IN_RO, "create {T}/ro2/new.txt", R, "outer stays ro"),
    _case("files/rw-in-ro-outer-read", RW_IN_RO, "read {T}/ro2/other.txt", A, "outer reads"),
    # -- '..' and relative paths: judged where they land (SPEC §3.1) ---------------------------
    _case("files/dotdot-out", RO, "read {T}/ro/../outside/secret.txt", R, "lands outside"),
    _case(
        "files/dotdot-in",
        RO,
        "read {T}/outside/../ro/file.txt",
        A,
        "lands inside",
        limits=("ns-dotdot-absent",),
    ),
    _case("files/relative-in", RO, "read file.txt", A, "relative to an exposed cwd", cwd="{T}/ro"),
    _case(
        "files/relative-dotdot-out",
        RO,
        "read ../outside/secret.txt",
        R,
        "lands outside",
        cwd="{T}/ro",
    ),
    # -- symbolic links: judged where they land ------------------------------------------------
    _case("files/symlink-in", RO, "read {T}/ro/link_in", A, "a link to an exposed file"),
    _case("files/symlink-out", RO, "read {T}/ro/link_out", R, "a link to an unexposed file"),
    _case(
        "files/planted-symlink-out",
        RW,
        "symlink_read {T}/outside/secret.txt {T}/rw/planted",
        R,
        "a link the program plants does not widen the rules",
    ),
    _case(
        "files/planted-symlink-in",
        f"{RW}; {RO}",
        "symlink_read {T}/ro/file.txt {T}/rw/planted",
        A,
        "a link to an exposed file reads it",
    ),
    _case(
        "files/symlink-write-to-ro",
        f"{RW}; {RO}",
        "write {T}/rw/link_to_ro",
        R,
        "writing through a link lands in the read-only exposure",
    ),
    # -- a path exposed through a symbolic link (issue 11 point 7) -----------------------------
    _case(
        "files/exposed-via-link-read",
        "expose-ro={T}/via_link",
        "read {T}/via_link/file.txt",
        A,
        "the rule's own name for the directory works",
    ),
    _case(
        "files/exposed-via-link-list",
        "expose-ro={T}/via_link",
        "list {T}/via_link",
        A,
        "the rule's own name for the directory works",
    ),
    _case(
        "files/exposed-via-link-real",
        "expose-ro={T}/via_link",
        "read {T}/real/file.txt",
        A,
        "the rule applies to where the link lands",
    ),
    _case(
        "files/exposed-file-via-link",
        "expose-ro={T}/file_link",
        "read {T}/file_link",
        A,
        "a single file exposed through a link",
    ),
    _case(
        "files/exposed-rw-via-link",
        "expose-rw={T}/rwlink",
        "create {T}/rwlink/new.txt",
        A,
        "a writable directory exposed through a link",
    ),
    # -- hard links ----------------------------------------------------------------------------
    _case(
        "files/hardlink-out",
        RW,
        "hardlink_read {T}/outside/secret.txt {T}/rw/h",
        R,
        "a hard link to an unexposed file is refused (SPEC §3.1)",
    ),
    _case(
        "files/hardlink-ro-write",
        f"{RW}; {RO}",
        "hardlink_write {T}/ro/file.txt {T}/rw/h",
        R,
        "a hard link must not make a read-only file writable",
    ),
    _case(
        "files/hardlink-ro-file-in-rw",
        RO_FILE_IN_RW,
        "hardlink_write {T}/rw/ro_file.txt {T}/rw/h",
        R,
        "a hard link must not make a read-only file writable",
    ),
    _case(
        "files/hardlink-within-rw",
        RW,
        "hardlink_read {T}/rw/file.txt {T}/rw/h",
        A,
        "a hard link inside a writable exposure",
    ),
    # -- ignore= (SPEC §3.1: the path does not exist) ------------------------------------------
    _case(
        "files/ignore-name",
        f"{RO}; ignore=secret.env",
        "read {T}/ro/secret.env",
        R,
        "ignore= beats every exposure",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-name-escaped",
        f"{RO}; ignore=clé.env",
        "read_escaped {T}/ro/clé.env",
        R,
        "a name is judged as the bytes the kernel gets: 'cl\\udcc3\\udca9.env' is 'clé.env'",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-listing",
        f"{RO}; ignore=secret.env",
        "listed {T}/ro secret.env",
        R,
        "an ignored path is absent from listings too",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-exists",
        f"{RO}; ignore=secret.env",
        "exists {T}/ro/secret.env",
        R,
        "an ignored path does not exist for os.stat either",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-glob-in-rw",
        f"{RW}; ignore=*.pem",
        "read {T}/rw/key.pem",
        R,
        "ignore= beats every exposure",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-glob-write",
        f"{RW}; ignore=*.pem",
        "write {T}/rw/key.pem",
        R,
        "an ignored path cannot be written either",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-anchored",
        f"{RO}; ignore={{T}}/ro/sub",
        "read {T}/ro/sub/deep.txt",
        R,
        "an anchored ignore= hides everything below it",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-link-name",
        f"{RO}; ignore=link_in",
        "read {T}/ro/link_in",
        R,
        "ignore= hides a name, a symbolic link's own included, whatever it points to (issue "
        "24, item 7: one meaning, as in listings)",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-etc-default",
        "ignore=/etc/mime.types",
        "read /etc/mime.types",
        R,
        "ignore= beats the default grants too (issue 24, item 7)",
        limits=("landlock-ignore",),
        needs=("/etc/mime.types",),
    ),
    _case(
        "files/ignore-in-system-tree",
        "ignore={STDLIB}/antigravity.py",
        "read {STDLIB}/antigravity.py",
        R,
        "ignore= beats the interpreter's installation too (issue 24, item 7)",
        limits=("landlock-ignore", "ns-ignore-system-trees"),
    ),
    _case(
        "files/ignore-keeps-others",
        f"{RO}; ignore=secret.env",
        "read {T}/ro/file.txt",
        A,
        "ignore= hides only what matches",
    ),
    _case(
        "files/ignore-created-after-start",
        f"{RO}; ignore=*.later",
        "wait_then_read {T}/ro/new.later",
        R,
        "a matching file created after start does not exist for the program either",
        limits=("landlock-ignore", "ns-ignore-later"),
        host="create-after-start",
    ),
    # -- rule files are protected from writes (SPEC §3.1) --------------------------------------
    _case(
        "files/rule-file-write",
        RW,
        "write {T}/rw/.py-sandboxes",
        R,
        "every loaded rule file is protected",
        config="{T}/rw/.py-sandboxes",
        limits=("landlock-rule-file",),
    ),
    _case(
        "files/rule-file-remove",
        RW,
        "remove {T}/rw/.py-sandboxes",
        R,
        "every loaded rule file is protected",
        config="{T}/rw/.py-sandboxes",
        limits=("landlock-rule-file",),
    ),
    _case(
        "files/rule-file-rename",
        RW,
        "rename {T}/rw/.py-sandboxes {T}/rw/moved",
        R,
        "every loaded rule file is protected",
        config="{T}/rw/.py-sandboxes",
        limits=("landlock-rule-file",),
    ),
    _case(
        "files/included-rule-file-write",
        f'{RW}; include "{{T}}/rw/extra.rules"',
        "write {T}/rw/extra.rules",
        R,
        "an included rule file is protected too",
        limits=("landlock-rule-file",),
    ),
    # -- default grants (issue 11 points 2, 4, 6, 8; SPEC §3.1) --------------------------------
    _case(
        "defaults/certificates-file",
        "",
        "read /etc/ssl/certs/ca-certificates.crt",
        A,
        "certificate stores are readable",
        needs=("/etc/ssl/certs/ca-certificates.crt",),
    ),
    _case("defaults/certificates-ssl", "", "certificates", A, "ssl loads the default CAs"),
    _case(
        "defaults/ssl-private",
        "",
        "list /etc/ssl/private",
        R,
        "private keys are not a certificate store",
        needs=("/etc/ssl/private",),
    ),
    _case("defaults/timezone", "", "timezone", A, "time zone data is readable"),
    _case("defaults/localtime", "", "read /etc/localtime", A, "time zone data is readable"),
    _case(
        "defaults/mime-types",
        "",
        "mimetypes_deb",
        A,
        "/etc/mime.types is a default grant (mimetypes reads it)",
        needs=("/etc/mime.types",),
    ),
    _case(
        "defaults/mime-types-file",
        "",
        "read /etc/mime.types",
        A,
        "/etc/mime.types is a default grant",
        needs=("/etc/mime.types",),
    ),
    _case("defaults/os-release", "", "os_release", A, "os-release is a default grant"),
    _case("defaults/dev-null", "", "write /dev/null", A, "/dev/null works (SPEC §3.1)"),
    _case("defaults/dev-zero", "", "read /dev/zero", A, "/dev/zero works (SPEC §3.1)"),
    _case("defaults/dev-urandom", "", "read /dev/urandom", A, "/dev/urandom works (SPEC §3.1)"),
    _case("defaults/user-lookup", "", "getuser", A, "the program's own account resolves"),
    _case(
        "defaults/stdlib",
        "",
        "read {STDLIB}/os.py",
        A,
        "the interpreter's installation is readable",
    ),
    _case(
        "defaults/usr-share",
        "",
        "read /usr/share/common-licenses/GPL-3",
        R,
        "the system's data files are not a default grant (only what programs need to run)",
        limits=("ns-system-trees",),
        needs=("/usr/share/common-licenses/GPL-3",),
    ),
    _case(
        "defaults/passwd-exposed",
        "expose-ro=/etc/passwd",
        "read_has /etc/passwd daemon:",
        A,
        "an explicit exposure shows the host's file",
    ),
    _case(
        "defaults/group-exposed",
        "expose-ro=/etc/group",
        "read_has /etc/group daemon:",
        A,
        "an explicit exposure shows the host's file",
    ),
    _case(
        "defaults/hosts-exposed",
        "expose-ro=/etc/hosts",
        "read_has /etc/hosts {NAME}",
        A,
        "an explicit exposure shows the host's file",
    ),
    _case(
        "defaults/script-readable",
        "",
        "read_self",
        A,
        "the script's directory is exposed (SPEC §5.2)",
    ),
    _case(
        "defaults/script-dir-not-exposed",
        "",
        "read_self",
        R,
        "the script's directory is not exposed: the script is not readable (SPEC §5.2)",
        script_exposed=False,
    ),
    _case(
        "defaults/exec-system-binary",
        EXEC,
        "exec /bin/true",
        A,
        "system executables run by default (issue 11: landlock's need of an exposure is a limit)",
        limits=("landlock-exec",),
    ),
    # -- environment (SPEC §2.5, §3.4) ---------------------------------------------------------
    _case("env/granted", "env=FOO=${FOO}", "env FOO bar", A, "granted from the host"),
    _case(
        "env/literal",
        "env=FOO=literal",
        "env FOO literal",
        A,
        "a literal value",
        control_env="FOO=literal",
    ),
    _case(
        "env/default",
        "env=FOO=${UNSET_VAR:-dflt}",
        "env FOO dflt",
        A,
        "the default applies",
        control_env="FOO=dflt",
    ),
    _case("env/ungranted", "", "env SECRET_TOKEN *", R, "only granted variables exist"),
    _case(
        "env/ungranted-proc",
        "",
        "environ_file SECRET_TOKEN",
        R,
        "not even in /proc/self/environ",
    ),
    _case("env/pattern", "env=APP_*=${APP_*}", "env APP_NAME demo", A, "a pattern grants"),
    _case(
        "env/unenv-beats-pattern",
        "env=APP_*=${APP_*}; unenv=APP_SECRET",
        "env APP_SECRET *",
        R,
        "unenv beats everything",
    ),
    _case(
        "env/unenv-beats-exact",
        "env=FOO=${FOO}; unenv=FOO",
        "env FOO *",
        R,
        "unenv beats everything",
    ),
    _case(
        "env/unenv-pattern",
        "env=APP_*=${APP_*}; unenv=*SECRET*",
        "env APP_SECRET *",
        R,
        "an unenv pattern",
    ),
    _case(
        "env/exact-beats-pattern",
        "env=APP_*=${APP_*}; env=APP_MODE=fixed",
        "env APP_MODE fixed",
        A,
        "an exact name beats a pattern",
        control_env="APP_MODE=fixed",
    ),
    # -- network OUT (SPEC §2.4) ---------------------------------------------------------------
    _case(
        "net/out-ip",
        "net=ALLOW|TCP|127.0.0.1|{P}|OUT",
        "connect 127.0.0.1 {P}",
        A,
        "an IP rule (host loopback)",
        limits=LL_HOST,
        host="tcp-servers",
    ),
    _case(
        "net/out-ip-other-port",
        "net=ALLOW|TCP|127.0.0.1|{P}|OUT",
        "connect 127.0.0.1 {Q}",
        R,
        "the port is not granted",
        host="tcp-servers",
    ),
    _case(
        "net/out-cidr",
        "net=ALLOW|TCP|127.0.0.0/8|{P}|OUT",
        "connect 127.0.0.1 {P}",
        A,
        "a CIDR rule",
        limits=LL_HOST,
        host="tcp-servers",
    ),
    _case(
        "net/out-cidr-miss",
        "net=ALLOW|TCP|10.0.0.0/8|{P}|OUT",
        "connect 127.0.0.1 {P}",
        R,
        "the CIDR does not contain the peer",
        host="tcp-servers",
    ),
    _case(
        "net/out-port-list",
        "net=ALLOW|TCP|127.0.0.1|{P},{Q}|OUT",
        "connect 127.0.0.1 {Q}",
        A,
        "a port list",
        limits=LL_HOST,
        host="tcp-servers",
    ),
    _case(
        "net/out-name",
        "net=ALLOW|TCP|{NAME}|{P}|OUT",
        "connect {NAME} {P}",
        A,
        "a host-name rule matches what the name resolves to",
        limits=LL_HOST,
        host="tcp-servers",
    ),
    _case(
        "net/out-localhost",
        "net=ALLOW|TCP|localhost|{P}|OUT",
        "connect localhost {P}",
        A,
        "localhost names the host's loopback",
        limits=LL_HOST,
        host="tcp-servers",
    ),
    _case(
        "net/out-none",
        "",
        "connect 127.0.0.1 {P}",
        R,
        "no net= rule: nothing",
        host="tcp-servers",
    ),
    _case(
        "net/out-udp-rule-tcp-connect",
        "net=ALLOW|UDP|127.0.0.1|{P}|OUT",
        "connect 127.0.0.1 {P}",
        R,
        "a UDP rule grants no TCP",
        host="tcp-servers",
        limits=("landlock-udp",),
    ),
    _case(
        "net/out-star-port-loopback",
        "net=ALLOW|TCP|*|{P}|OUT",
        "connect 127.0.0.1 {P}",
        A,
        "* is every host, the host's loopback included",
        limits=("ns-star-loopback",),
        host="tcp-servers",
    ),
    _case(
        "net/out-star-other-port",
        "net=ALLOW|TCP|*|{P}|OUT",
        "connect 127.0.0.1 {Q}",
        R,
        "the port is not granted",
        host="tcp-servers",
    ),
    _case(
        "net/out-star-all-loopback",
        "net=ALLOW|TCP|*|*|OUT",
        "connect 127.0.0.1 {P}",
        A,
        "* is every host, the host's loopback included",
        limits=("ns-star-loopback",),
        host="tcp-servers",
    ),
    _case(
        "net/udp-out",
        "net=ALLOW|UDP|127.0.0.1|{P}|OUT",
        "udp 127.0.0.1 {P}",
        A,
        "a UDP rule; the reply belongs to the exchange",
        limits=("landlock-udp", "qemu-udp-host-loopback"),
        host="udp-servers",
    ),
    _case(
        "net/udp-out-tcp-rule",
        "net=ALLOW|TCP|127.0.0.1|{P}|OUT",
        "udp 127.0.0.1 {P}",
        R,
        "a TCP rule grants no UDP",
        host="udp-servers",
    ),
    _case(
        "net/udp-out-star",
        "net=ALLOW|UDP|*|*|OUT",
        "udp 127.0.0.1 {P}",
        A,
        "* is every host, the host's loopback included",
        limits=("ns-star-loopback",),
        host="udp-servers",
    ),
    # -- DENY beside ALLOW: DENY wins (SPEC §2.4; issue 11 point 3) ----------------------------
    _case(
        "net/deny-port",
        "net=ALLOW|TCP|127.0.0.1|{P},{Q}|OUT; net=DENY|TCP|127.0.0.1|{P}|OUT",
        "connect 127.0.0.1 {P}",
        R,
        "DENY wins",
        host="tcp-servers",
    ),
    _case(
        "net/deny-port-other-allowed",
        "net=ALLOW|TCP|127.0.0.1|{P},{Q}|OUT; net=DENY|TCP|127.0.0.1|{P}|OUT",
        "connect 127.0.0.1 {Q}",
        A,
        "a DENY of one port leaves the other",
        limits=LL_HOST,
        host="tcp-servers",
    ),
    _case(
        "net/deny-first-in-file",
        "net=DENY|*|127.0.0.0/8|*|OUT; net=ALLOW|TCP|127.0.0.1|{P}|OUT",
        "connect 127.0.0.1 {P}",
        R,
        "DENY wins whatever the order",
        host="tcp-servers",
    ),
    _case(
        "net/deny-cidr-beside-star",
        "net=ALLOW|TCP|*|*|OUT; net=DENY|*|127.0.0.0/8|*|OUT",
        "connect 127.0.0.1 {P}",
        R,
        "DENY wins over *",
        host="tcp-servers",
    ),
    _case(
        "net/deny-name-by-ip",
        "net=ALLOW|TCP|127.0.0.1|{P}|OUT; net=DENY|*|{NAME}|*|OUT",
        "connect 127.0.0.1 {P}",
        R,
        "a DENY name matches the addresses it resolves to, reached by IP too",
        host="tcp-servers",
    ),
    _case(
        "net/deny-name-by-name",
        "net=ALLOW|TCP|127.0.0.1|{P}|OUT; net=DENY|*|{NAME}|*|OUT",
        "connect {NAME} {P}",
        R,
        "DENY wins",
        host="tcp-servers",
    ),
    _case(
        "net/deny-name-beside-star-by-ip",
        "net=ALLOW|TCP|*|*|OUT; net=DENY|*|{NAME}|*|OUT",
        "connect 127.0.0.1 {P}",
        R,
        "the issue's shape: a DENY name defeated by its address",
        host="tcp-servers",
    ),
    # -- IN: HOST is the local address bound; a client on the host (SPEC §2.4, point 5) --------
    _case(
        "net/in-wildcard",
        "net=ALLOW|TCP|0.0.0.0/32|{P}|IN",
        "serve_tcp 0.0.0.0 {P}",
        A,
        "the seed's MCP rule: a wildcard bind, reached from the host",
        host="tcp-client",
    ),
    _case(
        "net/in-loopback",
        "net=ALLOW|TCP|127.0.0.1|{P}|IN",
        "serve_tcp 127.0.0.1 {P}",
        A,
        "a loopback server, reached from the host's loopback",
        limits=(*LL_HOST, "qemu-in-loopback"),
        host="tcp-client",
    ),
    _case(
        "net/in-star",
        "net=ALLOW|TCP|*|{P}|IN",
        "serve_tcp 0.0.0.0 {P}",
        A,
        "* as the local address: any",
        host="tcp-client",
    ),
    _case(
        "net/in-other-port",
        "net=ALLOW|TCP|0.0.0.0/32|{P}|IN",
        "serve_tcp 0.0.0.0 {Q}",
        R,
        "the port is not granted",
        host="tcp-client",
    ),
    _case("net/in-none", "", "serve_tcp 0.0.0.0 {P}", R, "no IN rule", host="tcp-client"),
    _case(
        "net/in-out-rule-only",
        "net=ALLOW|TCP|*|{P}|OUT",
        "serve_tcp 0.0.0.0 {P}",
        R,
        "an OUT rule grants no server",
        host="tcp-client",
    ),
    _case(
        "net/udp-in-reply",
        "net=ALLOW|UDP|0.0.0.0/32|{P}|IN",
        "serve_udp 0.0.0.0 {P}",
        A,
        "a UDP server answers: replies belong to the IN grant (point 9)",
        limits=("landlock-udp",),
        host="udp-client",
    ),
    _case(
        "net/udp-in-star-reply",
        "net=ALLOW|UDP|*|{P}|IN",
        "serve_udp 0.0.0.0 {P}",
        A,
        "the issue's form of a UDP server rule",
        limits=("landlock-udp",),
        host="udp-client",
    ),
    _case("net/udp-in-none", "", "serve_udp 0.0.0.0 {P}", R, "no rule", host="udp-client"),
    # -- a program talking to itself on loopback -----------------------------------------------
    _case(
        "net/selftalk",
        "net=ALLOW|TCP|127.0.0.1|{P}|IN; net=ALLOW|TCP|127.0.0.1|{P}|OUT",
        "selftalk 127.0.0.1 {P}",
        A,
        "its own server, granted both ways",
        limits=LL_HOST,
    ),
    _case(
        "net/selftalk-star",
        "net=ALLOW|TCP|*|{P}|IN; net=ALLOW|TCP|*|{P}|OUT",
        "selftalk 127.0.0.1 {P}",
        A,
        "its own server, granted both ways for any host",
    ),
    _case(
        "net/unix-socket-in-rw",
        RW,
        "unix_selftalk {T}/rw/sock",
        A,
        "AF_UNIX sockets are judged by the file rules of their path (SPEC §2.4)",
        limits=("landlock-unix", "qemu-unix-socket-paths"),
    ),
    _case(
        "net/unix-socket-outside",
        RW,
        "unix_selftalk {T}/outside/sock",
        R,
        "AF_UNIX sockets are judged by the file rules of their path (SPEC §2.4)",
    ),
    # -- children ------------------------------------------------------------------------------
    _case(
        "children/python-reads-granted",
        f"{RO}; {EXEC}",
        "child_py {T}/ro/file.txt",
        A,
        "a child has the program's rights",
    ),
    _case(
        "children/python-reads-ungranted",
        f"{RO}; {EXEC}",
        "child_py {T}/outside/secret.txt",
        R,
        "a child has no more rights than the program",
        limits=("python-layer-children",),
    ),
    _case(
        "children/cat-reads-granted",
        f"{RO}; {EXEC}",
        "child_cat {T}/ro/file.txt",
        A,
        "a child has the program's rights",
        limits=("landlock-exec",),
    ),
    _case(
        "children/cat-reads-ungranted",
        f"{RO}; {EXEC}",
        "child_cat {T}/outside/secret.txt",
        R,
        "a child has no more rights than the program",
        limits=("python-layer-children",),
    ),
    _case(
        "children/exec-not-exposed",
        EXEC,
        "exec {T}/outside/bin/mytrue",
        R,
        "an executable in a directory no rule exposes",
        limits=("python-layer-children",),
    ),
    _case(
        "children/exec-exposed",
        f"expose-ro={{T}}/bin; {EXEC}",
        "exec {T}/bin/mytrue",
        A,
        "an executable in an exposed directory",
    ),
    _case(
        "children/env-ungranted",
        EXEC,
        "child_env SECRET_TOKEN",
        R,
        "a child inherits only the granted environment",
    ),
    _case(
        "children/env-granted",
        f"env=FOO=${{FOO}}; {EXEC}",
        "child_env FOO",
        A,
        "a child inherits the granted environment",
    ),
    # -- edge cases a reviewer tries (the differential review of issue 11) ----------------------
    # links across an exposure's border, both ways
    _case(
        "files/link-outside-to-ro",
        RO,
        "read {T}/outside/link_to_ro",
        A,
        "a link in an unexposed directory that lands in the exposure: judged where it lands",
        limits=("ns-dotdot-absent",),
    ),
    _case(
        "files/dirlink-out-read",
        RO,
        "read {T}/ro/dirlink_out/secret.txt",
        R,
        "a directory link inside the exposure that leads out of it",
    ),
    _case(
        "files/dirlink-out-list",
        RO,
        "list {T}/ro/dirlink_out",
        R,
        "a directory link inside the exposure that leads out of it",
    ),
    _case(
        "files/link-in-rw-write-out",
        RW,
        "write {T}/rw/link_out",
        R,
        "writing through a link in the writable exposure that leads out of it",
    ),
    _case(
        "files/dangling-link-create-out",
        RW,
        "write {T}/rw/dangling",
        R,
        "opening a dangling link for writing would create its target outside the exposure",
    ),
    _case(
        "files/nested-ro-link-out-write",
        RO_IN_RW,
        "write {T}/rw/link_out",
        R,
        "a link among the writable directory's entries (landlock grants them one by one) "
        "leads out: writing through it stays refused",
    ),
    # '..' with links, metadata of what no rule exposes
    _case(
        "files/dotdot-within-ro",
        RO,
        "read {T}/ro/sub/../file.txt",
        A,
        "'..' that stays inside the exposure",
    ),
    _case(
        "files/dotdot-rw-to-ro-write",
        f"{RO}; {RW}",
        "write {T}/rw/../ro/file.txt",
        R,
        "'..' from a writable exposure into a read-only one: judged where it lands",
    ),
    _case(
        "files/dotdot-after-dirlink",
        RO,
        "read {T}/ro/dirlink_out/../ro/file.txt",
        A,
        "'..' after a directory link is taken from the link's target (as the kernel does)",
        limits=("ns-dotdot-absent",),
    ),
    _case(
        "files/stat-outside",
        RO,
        "exists {T}/outside/secret.txt",
        A,
        "metadata of an unexposed path is not hidden (security-model.md: as under Landlock)",
        limits=("ns-unexposed-absent",),
    ),
    # metadata changes, links planted for later
    _case("files/rw-chmod", RW, "chmod {T}/rw/file.txt", A, "expose-rw grants a mode change"),
    _case(
        "files/ro-chmod",
        RO,
        "chmod {T}/ro/file.txt",
        R,
        "expose-ro grants no mode change",
        limits=("landlock-metadata",),
    ),
    _case(
        "files/outside-chmod",
        RO,
        "chmod {T}/outside/secret.txt",
        R,
        "nothing exposes it",
        limits=("landlock-metadata",),
    ),
    _case(
        "files/ro-utime",
        RO,
        "utime {T}/ro/file.txt",
        R,
        "expose-ro grants no change of times (issue 24, item 7)",
        limits=("landlock-metadata",),
    ),
    _case("files/rw-utime", RW, "utime {T}/rw/file.txt", A, "expose-rw grants a change of times"),
    _case(
        "files/symlink-create-in",
        f"{RW}; {RO}",
        "symlink_create {T}/ro/file.txt {T}/rw/planted",
        A,
        "a link to an exposed file may be created in a writable exposure",
    ),
    _case(
        "files/symlink-create-out",
        RW,
        "symlink_create {T}/outside/secret.txt {T}/rw/planted",
        R,
        "creating a link that points outside is refused (SPEC §3.1): left in the exposure, it "
        "would lead the host's own tools out of it after the run",
        limits=("kernel-symlink-target",),
    ),
    # moves between a read-only and a read-write exposure
    _case(
        "files/rename-ro-to-rw",
        f"{RO}; {RW}",
        "rename {T}/ro/file.txt {T}/rw/moved.txt",
        R,
        "moving a file out of a read-only exposure removes it there",
    ),
    _case(
        "files/rename-rw-to-ro",
        f"{RO}; {RW}",
        "rename {T}/rw/file.txt {T}/ro/moved.txt",
        R,
        "moving a file into a read-only exposure creates it there",
    ),
    _case(
        "files/copy-ro-to-rw",
        f"{RO}; {RW}",
        "copy {T}/ro/file.txt {T}/rw/copied.txt",
        A,
        "reading one exposure and writing the other",
    ),
    _case(
        "files/rename-dir-within-rw",
        RW,
        "rename {T}/rw/ro_sub {T}/rw/moved_dir",
        A,
        "a directory moved inside a writable exposure",
    ),
    _case(
        "files/rename-into-nested-ro",
        RO_IN_RW,
        "rename {T}/rw/file.txt {T}/rw/ro_sub/moved.txt",
        R,
        "moving a file into the read-only directory creates it there",
    ),
    _case(
        "files/ro-dir-in-rw-sibling-create",
        RO_IN_RW,
        "create {T}/rw/new.txt",
        A,
        "the writable directory stays writable beside its read-only part",
        limits=("landlock-nested-ro",),
    ),
    _case(
        "files/ro-dir-in-rw-sibling-remove",
        RO_IN_RW,
        "remove {T}/rw/file.txt",
        A,
        "the writable directory stays writable beside its read-only part",
        limits=("landlock-nested-ro",),
    ),
    _case(
        "files/ro-dir-in-rw-deep-create",
        f"{RW}; expose-ro={{T}}/rw/ro_sub; expose-rw={{T}}/rw/ro_sub",
        "create {T}/rw/ro_sub/new.txt",
        A,
        "the same path exposed read-only and read-write: read-write (rules.md §2.5)",
    ),
    # the same path in both lists
    _case(
        "files/ro-and-rw-write",
        f"{RW}; expose-ro={{T}}/rw",
        "write {T}/rw/file.txt",
        A,
        "the same path exposed read-only and read-write: read-write (rules.md §2.5)",
    ),
    _case(
        "files/ro-and-rw-create",
        f"expose-ro={{T}}/rw; {RW}",
        "create {T}/rw/new.txt",
        A,
        "the same path exposed read-only and read-write, in either order: read-write",
    ),
    # a single file exposed
    _case(
        "files/file-exposure-read",
        "expose-ro={T}/ro/file.txt",
        "read {T}/ro/file.txt",
        A,
        "a file exposure grants that file",
    ),
    _case(
        "files/file-exposure-sibling",
        "expose-ro={T}/ro/file.txt",
        "read {T}/ro/secret.env",
        R,
        "a file exposure grants nothing beside it",
    ),
    _case(
        "files/file-exposure-sibling-listed",
        "expose-ro={T}/ro/file.txt",
        "listed {T}/ro secret.env",
        R,
        "a file exposure shows nothing beside it",
    ),
    _case(
        "files/file-exposure-ro-write",
        "expose-ro={T}/ro/file.txt",
        "write {T}/ro/file.txt",
        R,
        "a read-only file exposure grants no write",
    ),
    _case(
        "files/file-exposure-rw-write",
        "expose-rw={T}/rw/file.txt",
        "write {T}/rw/file.txt",
        A,
        "a read-write file exposure grants writing the file",
    ),
    _case(
        "files/file-exposure-rw-sibling-create",
        "expose-rw={T}/rw/file.txt",
        "create {T}/rw/new.txt",
        R,
        "a file exposure grants no creation beside it",
    ),
    _case(
        "files/file-exposure-rw-remove",
        "expose-rw={T}/rw/file.txt",
        "remove {T}/rw/file.txt",
        R,
        "a file exposure grants the file's content, not its entry in a directory no rule "
        "makes writable (no kernel can grant removing one entry)",
    ),
    _case(
        "files/file-exposure-rw-rename",
        "expose-rw={T}/rw/file.txt",
        "rename {T}/rw/file.txt {T}/rw/renamed.txt",
        R,
        "renaming the exposed file writes its directory",
    ),
    _case(
        "files/file-exposure-rw-replace",
        "expose-rw={T}/rw/file.txt; expose-rw={T}/rw/key.pem",
        "rename {T}/rw/key.pem {T}/rw/file.txt",
        R,
        "replacing an exposed file by another removes an entry of its directory",
    ),
    _case(
        "files/rw-rmdir-exposed-root",
        "expose-rw={T}/realrw",
        "rmdir {T}/realrw",
        R,
        "removing the exposed directory itself writes its parent, which no rule exposes",
    ),
    _case(
        "files/remove-link-in-rw",
        RW,
        "remove {T}/rw/link_out",
        A,
        "removing a link in a writable exposure removes the link, not its target",
    ),
    _case(
        "files/missing-exposure",
        f"{RO}; expose-ro={{T}}/missing",
        "read {T}/ro/file.txt",
        R,
        "an exposed path that does not exist is an error: nothing runs (SPEC §2.2)",
    ),
    # how a rule's path is written
    _case(
        "files/rule-path-relative",
        "expose-ro=./ro",
        "read {T}/ro/file.txt",
        A,
        "./x is relative to the current directory",
        cwd="{T}",
    ),
    _case(
        "files/rule-path-bare-relative",
        "expose-ro=ro",
        "read {T}/ro/file.txt",
        A,
        "a bare relative path is relative to the current directory",
        cwd="{T}",
    ),
    _case(
        "files/rule-path-dotdot",
        "expose-ro={T}/rw/../ro",
        "read {T}/ro/file.txt",
        A,
        "'..' in a rule is normalised",
    ),
    _case(
        "files/rule-path-dotdot-not-rw",
        "expose-ro={T}/rw/../ro",
        "read {T}/rw/file.txt",
        R,
        "'..' in a rule grants only where it lands",
    ),
    _case(
        "files/rule-path-trailing-slash",
        "expose-rw={T}/rw/",
        "create {T}/rw/new.txt",
        A,
        "a trailing / changes nothing",
    ),
    _case(
        "files/ignore-trailing-slash",
        f"{RO}; ignore=sub/",
        "read {T}/ro/sub/deep.txt",
        R,
        "ignore=sub/ means sub",
        limits=("landlock-ignore",),
    ),
    # ~ and variables in paths
    _case(
        "files/tilde-file",
        "expose-ro=~/config.ini",
        "read {T}/home/config.ini",
        A,
        "~ is the home directory",
    ),
    _case(
        "files/tilde-other-file",
        "expose-ro=~/config.ini",
        "read {T}/home/.netrc",
        R,
        "~/config.ini grants nothing else of the home directory",
    ),
    _case(
        "files/variable-path",
        "expose-ro=${HOME}/config.ini",
        "read {T}/home/config.ini",
        A,
        "a variable in a path is expanded from python-sb's environment",
    ),
    _case(
        "files/variable-default-path",
        "expose-ro=${UNSET_VAR:-{T}/ro}",
        "read {T}/ro/file.txt",
        A,
        "a variable's default in a path",
    ),
    _case(
        "files/tilde-ignore",
        "expose-ro=~; ignore=~/.netrc",
        "read {T}/home/.netrc",
        R,
        "an anchored ignore= written with ~",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/tilde-ignore-keeps-others",
        "expose-ro=~; ignore=~/.netrc",
        "read {T}/home/config.ini",
        A,
        "the rest of the exposure stays",
    ),
    # ignore= on directories and more glob forms
    _case(
        "files/ignore-dir-read",
        f"{RO}; ignore=sub",
        "read {T}/ro/sub/deep.txt",
        R,
        "an ignored directory hides what is below it",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-dir-listed",
        f"{RO}; ignore=sub",
        "listed {T}/ro sub",
        R,
        "an ignored directory is absent from its parent's listing",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-dir-exists",
        f"{RO}; ignore=sub",
        "exists {T}/ro/sub",
        R,
        "an ignored directory does not exist for os.stat",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-dir-list",
        f"{RO}; ignore=sub",
        "list {T}/ro/sub",
        R,
        "an ignored directory cannot be listed",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-scandir",
        f"{RO}; ignore=secret.env",
        "scanned {T}/ro secret.env",
        R,
        "an ignored path is absent from os.scandir",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-glob-listing",
        f"{RO}; ignore=secret.env",
        "globbed {T}/ro secret.env",
        R,
        "an ignored path is absent from glob",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-walk-deep",
        f"{RO}; ignore=deep.txt",
        "walked {T}/ro deep.txt",
        R,
        "an ignored path is absent from os.walk, at any depth",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-access",
        f"{RO}; ignore=secret.env",
        "accessible {T}/ro/secret.env",
        R,
        "an ignored path does not exist for os.access",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-pathlib-exists",
        f"{RO}; ignore=secret.env",
        "path_exists {T}/ro/secret.env",
        R,
        "an ignored path does not exist for pathlib",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/walk-keeps-others",
        f"{RO}; ignore=secret.env",
        "walked {T}/ro deep.txt",
        A,
        "os.walk shows what is not ignored",
    ),
    _case(
        "files/ignore-doublestar",
        f"{RO}; ignore={{T}}/ro/**/deep.txt",
        "read {T}/ro/sub/deep.txt",
        R,
        "** matches across directories",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-question-mark",
        f"{RO}; ignore=secret.en?",
        "read {T}/ro/secret.env",
        R,
        "? matches one character",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-dir-create-in",
        f"{RW}; ignore=ro_sub",
        "create {T}/rw/ro_sub/new.txt",
        R,
        "nothing can be created in an ignored directory (it does not exist)",
        limits=("landlock-ignore",),
    ),
    _case(
        "files/ignore-glob-create",
        f"{RW}; ignore=*.pem",
        "create {T}/rw/new.pem",
        R,
        "a new file matching ignore= does not exist for the program either",
        limits=("landlock-ignore", "ns-ignore-later"),
    ),
    _case(
        "files/ignore-beats-file-exposure",
        "expose-ro={T}/ro/secret.env; ignore=*.env",
        "read {T}/ro/secret.env",
        R,
        "ignore= beats every exposure, a file exposure too",
        limits=("landlock-ignore",),
    ),
    # the working directory, the host's /tmp
    _case(
        "files/cwd-not-exposed-read",
        RO,
        "read secret.txt",
        R,
        "a relative path in an unexposed working directory",
        cwd="{T}/outside",
    ),
    _case(
        "files/cwd-not-exposed-list",
        RO,
        "list .",
        R,
        "an unexposed working directory cannot be listed",
        cwd="{T}/outside",
        limits=("ns-skeleton-dirs",),
    ),
    _case(
        "files/cwd-not-exposed-listed",
        RO,
        "listed . secret.txt",
        R,
        "an unexposed working directory shows none of its files",
        cwd="{T}/outside",
    ),
    _case(
        "files/parent-of-exposure-list",
        RO,
        "list {T}",
        R,
        "the directory above an exposure is not exposed",
        limits=("ns-skeleton-dirs",),
    ),
    _case(
        "files/parent-of-exposure-listed",
        RO,
        "listed {T} outside",
        R,
        "the directory above an exposure shows nothing unexposed",
    ),
    _case(
        "files/cwd-not-exposed-runs",
        RO,
        "read {T}/ro/file.txt",
        A,
        "an unexposed working directory does not stop the program",
        cwd="{T}/outside",
    ),
    _case(
        "defaults/host-tmp-create",
        "",
        "create /tmp/{U}",
        R,
        "the host's /tmp is not a default grant (only the private TMPDIR)",
    ),
    _case(
        "defaults/loader-cache",
        "",
        "read /etc/ld.so.cache",
        R,
        "the loader's cache is what a kernel provider needs to start a program, not a grant of "
        "every enforcer (rules.md §2.2a)",
        limits=("landlock-loader", "ns-system-trees"),
        needs=("/etc/ld.so.cache",),
    ),
    _case(
        "defaults/shared-library",
        "",
        "read_glob /usr/lib/x86_64-linux-gnu/libc.so*",
        R,
        "the shared libraries are what a kernel provider needs to start a program, not a grant "
        "of every enforcer",
        limits=("landlock-loader", "ns-system-trees"),
        needs=("/usr/lib/x86_64-linux-gnu",),
    ),
    # /dev and /proc
    _case("defaults/dev-random", "", "read /dev/random", A, "/dev/random is a default grant"),
    _case(
        "defaults/dev-urandom-write",
        "",
        "write /dev/urandom",
        A,
        "/dev/urandom and /dev/random are writable by every enforcer (writing only mixes data "
        "into the entropy pool, as for any user)",
    ),
    _case("defaults/dev-full-read", "", "read /dev/full", A, "/dev/full is a default grant"),
    _case(
        "defaults/proc-self-status",
        "",
        "read /proc/self/status",
        A,
        "the process's own /proc entry is a default grant",
    ),
    _case(
        "defaults/proc-self-cmdline",
        "",
        "read /proc/self/cmdline",
        A,
        "the process's own /proc entry is a default grant",
    ),
    _case(
        "defaults/proc-other-process",
        "",
        "read_has /proc/{HOSTPID}/environ PATH=",
        R,
        "another process's /proc entry is not the program's own",
    ),
    _case(
        "defaults/proc-other-process-cmdline",
        "",
        "read /proc/{HOSTPID}/cmdline",
        R,
        "another process's /proc entry is not the program's own",
    ),
    _case(
        "defaults/etc-hosts-no-rule",
        "",
        "read_has /etc/hosts {NAME}",
        A,
        "/etc/hosts is a default grant (name-service files, rules.md §2.2a)",
        limits=("ns-generated-etc",),
    ),
    # environment: what a program sees without a rule, patterns
    _case("env/path-not-granted", "", "env PATH *", R, "PATH is not a default (SPEC §3.4)"),
    _case("env/home-not-granted", "", "env HOME *", R, "HOME is not a default (SPEC §3.4)"),
    _case(
        "env/pwd-not-granted",
        "",
        "env PWD *",
        R,
        "PWD is not a default (SPEC §3.4)",
        control_env="PWD=/",
    ),
    _case(
        "env/lang-not-granted",
        "",
        "env LANG *",
        R,
        "LANG is not a default (SPEC §3.4)",
    ),
    _case(
        "env/tmpdir-default",
        "",
        "env TMPDIR *",
        A,
        "TMPDIR points to the private directory (SPEC §3.1)",
        control_env="TMPDIR=/tmp",
    ),
    _case(
        "env/path-granted",
        "env=PATH=${PATH}",
        "env PATH *",
        A,
        "PATH when a rule grants it",
    ),
    _case(
        "env/star-pattern",
        "env=*=${*}; unenv=*SECRET*,*TOKEN*",
        "env FOO bar",
        A,
        "a * pattern grants every host variable",
    ),
    _case(
        "env/star-pattern-unenv",
        "env=*=${*}; unenv=*SECRET*,*TOKEN*",
        "env SECRET_TOKEN *",
        R,
        "unenv beats a * pattern",
    ),
    _case(
        "env/pattern-other-prefix",
        "env=APP_*=${APP_*}",
        "env FOO *",
        R,
        "a pattern grants only what it matches",
    ),
    _case(
        "env/pattern-literal",
        "env=APP_*=fixed",
        "env APP_NAME fixed",
        A,
        "a pattern with a literal value gives it to every matching host variable",
        control_env="APP_NAME=fixed",
    ),
    _case(
        "env/unenv-pattern-beats-exact",
        "env=APP_NAME=${APP_NAME}; unenv=APP_*",
        "env APP_NAME *",
        R,
        "unenv beats everything, an exact env= too",
    ),
    _case(
        "env/template",
        "env=FOO=x-${FOO}",
        "env FOO x-bar",
        A,
        "a template around a host variable",
        control_env="FOO=x-bar",
    ),
    _case(
        "env/unset-host-var",
        "env=NOT_ON_HOST=${NOT_ON_HOST}",
        "env NOT_ON_HOST *",
        R,
        "a value that is only ${X} passes nothing when X is unset on the host (rules.md §2.5)",
        control_env="NOT_ON_HOST=set-for-the-control",
    ),
    # children
    _case(
        "children/python-writes-ro",
        f"{RO}; {EXEC}",
        "child_py_write {T}/ro/file.txt",
        R,
        "a child has no more rights than the program",
        limits=("python-layer-children",),
    ),
    _case(
        "children/python-writes-rw",
        f"{RW}; {EXEC}",
        "child_py_write {T}/rw/file.txt",
        A,
        "a child has the program's rights",
    ),
    _case(
        "children/no-process-exec-grant",
        RO,
        "child_cat {T}/ro/file.txt",
        R,
        "python-api: starting a program needs process-exec (the Python layer's rule)",
        python_only=True,
    ),
    _case(
        "children/function-grant",
        f"{RO}; python-api=ALLOW:subprocess.run",
        "child_cat {T}/ro/file.txt",
        A,
        "the outermost granted function covers what it delegates to (SPEC §3.5)",
        limits=("landlock-exec",),
        python_only=True,
    ),
    # network: address forms of one rule, UDP without a rule, names
    _case(
        "net/out-ipv4-rule-ipv6-peer",
        "net=ALLOW|TCP|127.0.0.1|{P}|OUT",
        "connect ::1 {P}",
        R,
        "an IPv4 rule does not grant the IPv6 loopback",
        host="tcp-servers-46",
    ),
    _case(
        "net/out-ipv6-rule",
        "net=ALLOW|TCP|::1|{P}|OUT",
        "connect ::1 {P}",
        A,
        "an IPv6 rule (the host's ::1)",
        limits=(*LL_HOST, "qemu-ipv6-host-loopback"),
        host="tcp-servers-46",
    ),
    _case(
        "net/out-ipv6-rule-ipv4-peer",
        "net=ALLOW|TCP|::1|{P}|OUT",
        "connect 127.0.0.1 {P}",
        R,
        "an IPv6 rule does not grant the IPv4 loopback",
        host="tcp-servers-46",
    ),
    _case(
        "net/out-mapped-ipv4",
        "net=ALLOW|TCP|127.0.0.1|{P}|OUT",
        "connect ::ffff:127.0.0.1 {P}",
        A,
        "an IPv4-mapped IPv6 address is judged as IPv4 (SPEC §2.4)",
        limits=LL_HOST,
        host="tcp-servers",
    ),
    _case(
        "net/out-mapped-ipv4-deny",
        "net=ALLOW|TCP|*|*|OUT; net=DENY|*|127.0.0.0/8|*|OUT",
        "connect ::ffff:127.0.0.1 {P}",
        R,
        "a DENY of an IPv4 network holds for its IPv4-mapped form",
        host="tcp-servers",
    ),
    _case(
        "net/out-mapped-rule",
        "net=ALLOW|TCP|::ffff:127.0.0.1|{P}|OUT",
        "connect 127.0.0.1 {P}",
        A,
        "a rule written as an IPv4-mapped address is the IPv4 address",
        limits=LL_HOST,
        host="tcp-servers",
    ),
    _case(
        "net/deny-star-port-beside-loopback-allow",
        "net=ALLOW|TCP|127.0.0.1|{P},{Q}|OUT; net=DENY|TCP|*|{P}|OUT",
        "connect 127.0.0.1 {P}",
        R,
        "a DENY for every host covers the host's loopback too",
        host="tcp-servers",
    ),
    _case(
        "net/deny-ipv6-beside-ipv4-allow",
        "net=ALLOW|TCP|127.0.0.1|{P}|OUT; net=DENY|TCP|::1|{P}|OUT",
        "connect 127.0.0.1 {P}",
        A,
        "a DENY of ::1 leaves 127.0.0.1",
        limits=LL_HOST,
        host="tcp-servers-46",
    ),
    _case(
        "net/out-zero-address",
        "net=ALLOW|TCP|127.0.0.1|{P}|OUT",
        "connect 0.0.0.0 {P}",
        A,
        "0.0.0.0 as a peer is this host's own loopback (Linux)",
        limits=LL_HOST,
        host="tcp-servers",
    ),
    _case(
        "net/out-other-loopback-address",
        "net=ALLOW|TCP|127.0.0.1|{P}|OUT",
        "connect 127.0.0.2 {P}",
        R,
        "a rule for 127.0.0.1 does not grant 127.0.0.2",
        host="tcp-servers-lo2",
    ),
    _case(
        "net/out-loopback-cidr-other-address",
        "net=ALLOW|TCP|127.0.0.0/8|{P}|OUT",
        "connect 127.0.0.2 {P}",
        A,
        "a loopback CIDR grants every loopback address",
        limits=(*LL_HOST, "ns-loopback-other-addresses"),
        host="tcp-servers-lo2",
    ),
    _case(
        "net/udp-out-none",
        "",
        "udp 127.0.0.1 {P}",
        R,
        "no net= rule: no UDP either",
        host="udp-servers",
    ),
    _case(
        "net/udp-out-other-port",
        "net=ALLOW|UDP|127.0.0.1|{P}|OUT",
        "udp 127.0.0.1 {Q}",
        R,
        "the UDP port is not granted",
        limits=("landlock-udp",),
        host="udp-servers",
    ),
    _case(
        "net/resolve-uncovered",
        "net=ALLOW|TCP|127.0.0.1|{P}|OUT",
        "resolve {NAME}",
        R,
        "a name no rule covers is refused before any query (SPEC §2.4)",
    ),
    _case(
        "net/resolve-no-rule",
        "",
        "resolve {NAME}",
        R,
        "no net= rule: no name resolves",
        limits=("landlock-names",),
    ),
    _case(
        "net/resolve-covered",
        "net=ALLOW|TCP|{NAME}|{P}|OUT",
        "resolve {NAME}",
        A,
        "a name a rule grants resolves",
        limits=LL_HOST,
    ),
    _case(
        "net/in-loopback-rule-wildcard-bind",
        "net=ALLOW|TCP|127.0.0.1|{P}|IN",
        "serve_tcp 0.0.0.0 {P}",
        R,
        "a loopback IN rule grants no wildcard bind",
        limits=("ns-in-bind-address",),
        host="tcp-client",
    ),
    _case(
        "net/in-wildcard-rule-loopback-bind",
        "net=ALLOW|TCP|0.0.0.0/32|{P}|IN",
        "serve_tcp 127.0.0.1 {P}",
        R,
        "an IN rule of the wildcard bind grants that bind, not one to a single address (SPEC "
        "2.4: HOST is the address bound; issue 24, item 7)",
        limits=("kernel-in-wildcard-one-address", "qemu-in-loopback"),
        host="tcp-client",
    ),
    _case(
        "net/name-rule-by-address",
        "net=ALLOW|TCP|{NAME}|{P}|OUT",
        "connect 127.0.0.1 {P}",
        R,
        "a rule naming a host matches the name, not its address written directly (issue 24, "
        "item 7)",
        limits=(*LL_HOST, "ns-name-by-address"),
        host="tcp-servers",
    ),
    _case(
        "net/in-udp-rule-tcp-server",
        "net=ALLOW|UDP|0.0.0.0/32|{P}|IN",
        "serve_tcp 0.0.0.0 {P}",
        R,
        "a UDP IN rule grants no TCP server",
        limits=("landlock-udp",),
        host="tcp-client",
    ),
    # -- host names through the edge proxy: a remote host, not loopback (issue 32) -------------
    # Loopback is never redirected to the proxy, so these run against another machine
    # (remote.py): granted.test and refused.test, HTTPS on {P}, plain HTTP on {Q}.
    _case(
        "net/edge-name-granted",
        EDGE_GRANT,
        "https_get https://granted.test:{P}/ granted",
        A,
        "an ALLOW by name, reached by name (urllib: through HTTPS_PROXY where it is set)",
        limits=LL_HOST,
        host="remote",
    ),
    _case(
        "net/edge-name-refused",
        EDGE_GRANT,
        "https_get https://refused.test:{P}/ refused",
        R,
        "no rule names refused.test",
        host="remote",
    ),
    _case(
        "net/edge-deny-name-beside-star",
        "net=ALLOW|TCP|*|{P}|OUT; net=DENY|TCP|refused.test|*|OUT",
        "https_get https://refused.test:{P}/ refused",
        R,
        "a DENY by name wins over a wider ALLOW",
        host="remote",
    ),
    _case(
        "net/edge-deny-name-other-allowed",
        "net=ALLOW|TCP|*|{P}|OUT; net=DENY|TCP|refused.test|*|OUT",
        "https_get https://granted.test:{P}/ granted",
        A,
        "a DENY of one name leaves the wider ALLOW to the others",
        limits=LL_HOST,
        host="remote",
    ),
    _case(
        "net/edge-name-by-address",
        EDGE_GRANT,
        "https_get https://{G}:{P}/ granted",
        R,
        "a rule naming a host matches the name, not the name's address written directly "
        "(issue 24 item 7; the proxy judges a connection naming no host by address rules)",
        host="remote",
    ),
    _case(
        "net/edge-lying-host",
        "net=ALLOW|TCP|granted.test|{Q}|OUT",
        "http_host {R} {Q} granted.test refused",
        R,
        "plain HTTP to refused.test's address, its Host line naming granted.test: no rule "
        "allows that address (the proxy reaches only the host named: the lie gains nothing)",
        host="remote",
    ),
    _case(
        "net/edge-direct-granted",
        EDGE_GRANT,
        "https_direct granted.test {P} granted",
        A,
        "a client ignoring the proxy variables (http.client), by name: redirected where "
        "there is a proxy, judged by the TLS server name",
        limits=LL_HOST,
        host="remote",
    ),
    _case(
        "net/edge-direct-refused",
        f"{EDGE_GRANT}; net=ALLOW|TCP|refused.test|{{Q}}|OUT",
        "https_direct refused.test {P} refused",
        R,
        "a client ignoring the proxy variables, to a name allowed on another port only",
        host="remote",
    ),
    _case(
        "net/edge-child-direct-refused",
        f"{EDGE_GRANT}; net=ALLOW|TCP|refused.test|{{Q}}|OUT; {EXEC}",
        "child_https_direct refused.test {P} refused",
        R,
        "a child (which the Python layer does not see) ignoring the proxy variables, to a "
        "name allowed on another port only",
        limits=("python-layer-children", "landlock-tcp-host-part"),
        host="remote",
    ),
    # -- imports: the Python layer only (SPEC §3.3) --------------------------------------------
    _case("imports/granted", "python-import=json", "import json", A, "listed", python_only=True),
    _case(
        "imports/not-granted", "python-import=json", "import csv", R, "not listed", python_only=True
    ),
    _case(
        "imports/stdlib-not-exempt",
        "python-import=json",
        "import socket",
        R,
        "the standard library is not exempt",
        python_only=True,
    ),
    _case("imports/star", "python-import=*", "import csv", A, "* allows all", python_only=True),
    _case(
        "imports/submodule",
        "python-import=xml",
        "import xml.dom.minidom",
        A,
        "top-level names decide",
        python_only=True,
    ),
    _case(
        "imports/preloaded-still-judged",
        "python-import=json",
        "import marshal",
        R,
        "a module the launcher imported is still judged",
        python_only=True,
    ),
    # -- sqlite (issue 11 point 12) ------------------------------------------------------------
    _case(
        "sqlite/ro-uri-in-ro",
        RO,
        "sqlite_ro_uri {T}/ro/db.sqlite",
        A,
        "mode=ro only reads",
    ),
    _case(
        "sqlite/write-in-ro", RO, "sqlite_write {T}/ro/db.sqlite", R, "expose-ro grants no write"
    ),
    _case("sqlite/write-in-rw", RW, "sqlite_write {T}/rw/db.sqlite", A, "expose-rw grants writes"),
    _case(
        "sqlite/ro-uri-outside",
        RO,
        "sqlite_ro_uri {T}/outside/db.sqlite",
        R,
        "nothing exposes it",
    ),
    _case(
        "sqlite/write-ro-dir-in-rw",
        RO_IN_RW,
        "sqlite_write {T}/rw/ro_sub/db.sqlite",
        R,
        "the longest exposed prefix (expose-ro) decides",
    ),
    # -- learned, then replayed under each configuration (issue 11 points 4, 10, 11, 13) -------
    _case(
        "learned/copy-file",
        "",
        "copy {T}/data/in.txt {T}/out/result.txt",
        A,
        "a learned profile replays (SPEC §4)",
        learned=True,
    ),
    _case("learned/mimetypes", "", "mimetypes_deb", A, "replays (point 4)", learned=True),
    _case(
        "learned/child-cat",
        "",
        "child_cat {T}/data/in.txt",
        A,
        "what a child does is learned (point 11)",
        learned=True,
    ),
    _case(
        "learned/exec-system-binary",
        "",
        "exec /bin/true",
        A,
        "the executable run is learned (point 11)",
        learned=True,
    ),
    _case(
        "learned/selftalk-port-0",
        "",
        "selftalk 127.0.0.1 0",
        A,
        "a server on port 0 talking to itself replays everywhere (point 10); the learned "
        "loopback bind is a host Landlock cannot filter alone (refused at start, py off)",
        learned=True,
        limits=("landlock-net-host",),
    ),
    _case(
        "learned/out-loopback",
        "",
        "connect 127.0.0.1 {P}",
        A,
        "a learned connection replays",
        limits=LL_HOST,
        host="tcp-servers",
        learned=True,
    ),
    _case(
        "learned/in-wildcard",
        "",
        "serve_tcp 0.0.0.0 {P}",
        A,
        "a learned server is reachable from the host on replay (point 5)",
        host="tcp-client",
        learned=True,
    ),
    _case("learned/env-by-name", "", "env FOO bar", A, "a variable read by name", learned=True),
    _case(
        "learned/env-scan-no-secret",
        "",
        "getproxies_env AWS_SECRET_ACCESS_KEY",
        R,
        "a scan of the environment grants no secret (point 13)",
        learned=True,
    ),
    _case(
        "learned/sqlite-ro-uri",
        "",
        "sqlite_ro_uri {T}/data/db.sqlite",
        A,
        "replays (point 12)",
        learned=True,
    ),
    _case("learned/certificates", "", "certificates", A, "replays", learned=True),
    _case("learned/timezone", "", "timezone", A, "replays", learned=True),
    _case(
        "learned/script-dir", "", "read_self", A, "the script's directory is learned", learned=True
    ),
    _case("learned/home-file", "", "read {T}/home/config.ini", A, "a ~/ path", learned=True),
    _case("learned/tmpdir", "", "tmpwrite", A, "the private TMPDIR", learned=True),
    _case("learned/user-lookup", "", "getuser", A, "replays", learned=True),
]
