"""The file system a namespace sandbox sees, as an ordered list of mount operations.

``bwrap`` and ``unshare`` build the same tree; this module decides *what* it holds and in which
order, each provider decides *how* (bubblewrap options, or mount syscalls in ``_ns_init``).

The tree starts empty (a tmpfs root) and receives, in this order:

1. the system directories a Python program needs (``/usr``, ``/lib*``, the ``/bin`` links, a
   short list of ``/etc`` files), read-only; ``/proc``, a minimal ``/dev``, a private ``/tmp``;
2. generated ``/etc/passwd``, ``/etc/group``, ``/etc/hosts`` (carrying the pinned host names of
   the ``net=`` rules), ``/etc/resolv.conf`` and ``/etc/nsswitch.conf``;
3. the interpreter's installation and site directories (``RunContext.prefixes``), read-only;
4. the ``expose-ro``/``expose-rw`` paths, shallowest first so that the longest exposed prefix
   decides read-only versus read-write (SPEC §2.5);
5. the private temporary directory of the run, read-write;
6. every loaded rule file that lies inside an exposure, bound read-only over itself, so a
   writable exposure cannot be used to rewrite the rules.

``ignore=`` patterns are expanded when the sandbox starts, inside the exposed trees only. A
directory that directly holds an ignored entry is rebuilt instead of bound: a tmpfs with each of
its other entries bound one by one, so the ignored entry is absent (``stat`` gives ``ENOENT``,
listings do not show it). Limits, stated in ``docs/providers/bwrap.md``: a file created later
matching a pattern is not hidden; new entries created by the program *directly* in a rebuilt
writable directory live in memory only (a warning says so).
"""

from __future__ import annotations

import os
import stat
import sys

from pysandboxes.errors import ConfigError
from pysandboxes.policy import defaults as _defaults
from pysandboxes.policy.model import PathRule, Policy
from pysandboxes.providers.base import Launch

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Literal

    Kind = Literal[
        "ro-bind", "bind", "dir", "tmpfs", "symlink", "file", "proc", "dev", "remount-ro"
    ]

#: Top-level system entries mounted read-only (or recreated as the same symlink): the
#: ``system-trees`` default grant of ``policy/defaults.py``.
SYSTEM_TOP = tuple(path.lstrip("/") for path in _defaults.SYSTEM_TREES.paths)

#: /etc entries bound from the host, read-only: the default grants of ``policy/defaults.py``
#: that lie below /etc (certificate stores, OpenSSL's configuration, time zone, mime.types,
#: os-release, inputrc, the name-service files), and the loader's cache and alternatives.
#: Missing ones are skipped. Each is one more mount at every start.
SYSTEM_ETC = _defaults.namespace_etc()

#: Device nodes bound into the private /dev (the unshare provider; bwrap's --dev has the same).
DEV_NODES = _defaults.namespace_devices()

#: Upper bound on the entries examined to expand ``ignore=`` patterns (fail closed above).
MAX_SCAN = 200_000

#: Generated files whose content the providers write (bound from the host only where an
#: exposure names them: see :func:`_generated_etc`).
GENERATED_ETC = _defaults.GENERATED_ETC


class Mount:
    """One step of building the tree. ``dest`` is absolute inside the sandbox.

    - ``ro-bind``/``bind``: bind host ``source`` (recursively) read-only / read-write;
    - ``dir``: create a directory; ``tmpfs``: mount an empty tmpfs (``mode`` its permissions);
    - ``symlink``: create a link whose target is ``source``;
    - ``file``: a read-only file holding ``data``;
    - ``proc``/``dev``: a new procfs / a minimal /dev;
    - ``remount-ro``: make the mount at ``dest`` read-only (not recursively).

    A plain class: a dataclass costs about a millisecond to define, on every start.
    """

    __slots__ = ("data", "dest", "kind", "mode", "source")

    def __init__(
        self, kind: Kind, dest: str, source: str = "", data: bytes = b"", mode: int = 0o755
    ) -> None:
        self.kind = kind
        self.dest = dest
        self.source = source
        self.data = data
        self.mode = mode

    def __repr__(self) -> str:
        return f"Mount({self.kind!r}, {self.dest!r}, {self.source!r})"


class TreePlan:
    """The ordered mounts, plus what a user should be told at start."""

    __slots__ = ("hidden", "mounts", "warnings")

    def __init__(self) -> None:
        self.mounts: list[Mount] = []
        self.warnings: list[str] = []
        self.hidden: list[str] = []  # host paths made absent by ignore=

    def add(
        self, kind: Kind, dest: str, source: str = "", *, data: bytes = b"", mode: int = 0o755
    ) -> None:
        if kind in ("ro-bind", "bind"):
            # Resolved on the host now: the unshare step reaches sources below /oldroot, where
            # an absolute symbolic link (/etc/localtime) would point into the new tree.
            source = os.path.realpath(source)
        self.mounts.append(Mount(kind, dest, source, data, mode))


# -- ignore= --------------------------------------------------------------------------------------


class IgnoreMatcher:
    """Decides whether a host path is hidden by an ``ignore=`` pattern.

    A pattern without ``/`` (``.env``, ``*.pem``) matches an entry of that name at any depth; a
    pattern with ``/`` is a glob over the whole path (absolute, or relative to the working
    directory), ``*`` not crossing ``/``. A hidden directory hides its whole subtree.
    """

    def __init__(self, rules: Sequence[PathRule], cwd: str) -> None:
        self.names: list[str] = []
        self.paths: list[str] = []
        for rule in rules:
            pattern = rule.path.strip()
            if not pattern:
                continue
            if pattern.startswith("~"):
                pattern = os.path.expanduser(pattern)
            pattern = pattern.rstrip("/") or "/"
            if "/" not in pattern:
                self.names.append(pattern)
            else:
                if not pattern.startswith("/"):
                    pattern = os.path.join(cwd, pattern)
                self.paths.append(os.path.normpath(pattern))

    def __bool__(self) -> bool:
        return bool(self.names or self.paths)

    def hides(self, path: str) -> bool:
        import fnmatch  # only a policy with ignore= rules pays for it (it imports re)

        name = os.path.basename(path)
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in self.names):
            return True
        return self.hides_by_path(path)

    def hides_by_path(self, path: str) -> bool:
        """Whether a pattern with ``/`` (a path) matches ``path``: the patterns applied to the
        system entries bound one by one. A name pattern (``*.pem``) is not: it would take the
        certificate bundle away from OpenSSL, whose reads the Python layer does not judge."""

        parts = path.split("/")
        return any(_full_match(parts, pattern.split("/")) for pattern in self.paths)


def _full_match(parts: list[str], pattern: list[str]) -> bool:
    import fnmatch

    if len(parts) != len(pattern):
        return False
    return all(fnmatch.fnmatchcase(p, q) for p, q in zip(parts, pattern, strict=True))


def find_hidden(root: str, matcher: IgnoreMatcher, skip: Iterable[str] = ()) -> list[str]:
    """Every path below ``root`` (or ``root`` itself) that ``matcher`` hides, not following
    symbolic links and not descending into hidden directories or into ``skip`` (other
    exposures, planned on their own). ``ConfigError`` above ``MAX_SCAN`` entries: an ignore rule
    that cannot be enforced must not be silently dropped."""

    if matcher.hides(root):
        return [root]
    skipped = set(skip)
    found: list[str] = []
    seen = 0
    stack = [root]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_SCAN:
                raise ConfigError(
                    f"cannot enforce ignore= under {root}: more than {MAX_SCAN} entries to "
                    "examine; expose a smaller directory"
                )
            if matcher.hides(entry.path):
                found.append(entry.path)
            elif entry.path not in skipped and entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return found


# -- the plan -------------------------------------------------------------------------------------


def _exists(path: str) -> bool:
    return os.path.lexists(path)


def _under(path: str, root: str) -> bool:
    return path == root or root == "/" or path.startswith(root.rstrip("/") + "/")


def interpreter_paths(launch: Launch) -> list[str]:
    """Directories that hold the interpreter, its standard library and site packages, and this
    package (the child bootstraps from it), deduplicated, existing only."""

    ctx = launch.context
    candidates: list[str] = list(ctx.prefixes)
    for exe in (ctx.python, launch.child_argv[0] if launch.child_argv else ""):
        if exe:
            candidates.append(os.path.dirname(os.path.abspath(exe)))
            candidates.append(os.path.dirname(os.path.realpath(exe)))
    # The directory that holds ``pysandboxes`` (this file is pysandboxes/providers/_ns_mounts.py).
    candidates.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
    out: list[str] = []
    for path in candidates:
        path = os.path.normpath(path)
        if path and path != "/" and os.path.isdir(path) and path not in out:
            out.append(path)
    out.sort(key=lambda p: (p.count("/"), p))
    # A directory already below another one adds nothing.
    return [p for i, p in enumerate(out) if not any(_under(p, q) for q in out[:i])]


def etc_files(*, hosts: str, resolver: str | None, hostname: str) -> dict[str, bytes]:
    """The generated /etc files: only root and the sandbox user, pinned hosts, one resolver."""

    uid, gid = os.getuid(), os.getgid()
    home = "/nonexistent"
    passwd = "root:x:0:0:root:/root:/usr/sbin/nologin\n"
    group = "root:x:0:\n"
    if uid != 0:
        passwd += f"sandbox:x:{uid}:{gid}:sandbox:{home}:/usr/sbin/nologin\n"
    if gid != 0:
        group += f"sandbox:x:{gid}:\n"
    files = {
        "passwd": passwd.encode(),
        "group": group.encode(),
        "hosts": hosts.encode(),
        "nsswitch.conf": b"passwd: files\ngroup: files\nhosts: files dns\n",
        "hostname": f"{hostname}\n".encode(),
        "resolv.conf": (f"nameserver {resolver}\n" if resolver else "").encode(),
    }
    return files


def hosts_file(hostname: str, pinned: Sequence[tuple[str, str]]) -> str:
    """/etc/hosts: loopback names, the sandbox's own host name, then each pinned name."""

    lines = [
        "127.0.0.1\tlocalhost",
        f"127.0.1.1\t{hostname}",
        "::1\tlocalhost ip6-localhost ip6-loopback",
    ]
    lines += [f"{ip}\t{name}" for name, ip in pinned]
    return "\n".join(lines) + "\n"


def build_plan(
    launch: Launch,
    *,
    hostname: str,
    pinned: Sequence[tuple[str, str]] = (),
    resolver: str | None = None,
) -> TreePlan:
    """The mounts for ``launch``; ``ConfigError`` when the policy cannot be built as asked."""

    policy = launch.policy
    plan = TreePlan()
    from pysandboxes.providers import limits

    python_layer = bool(policy.py_sandbox.value)
    layer = "" if python_layer else ", py-sandbox=false"
    for item in limits.namespace_notices(policy, launch.context.provider):
        if item.at_start:
            plan.warnings.append(f"{launch.context.provider}{layer}: {item.text}")

    # 1. system. An entry bound one by one that an ignore= path pattern hides is left out
    # (issue 24, item 7: the file was read, and the start said it was absent); the trees bound
    # whole are not searched, nor are name patterns applied here (files.ignore-system-trees).
    matcher = IgnoreMatcher(policy.ignore, launch.cwd)
    for top in SYSTEM_TOP:
        host = "/" + top
        if matcher.paths and matcher.hides_by_path(host):
            plan.hidden.append(host)
            continue
        if os.path.islink(host):
            plan.add("symlink", host, os.readlink(host))
        elif os.path.isdir(host):
            plan.add("ro-bind", host, host)
    plan.add("proc", "/proc")
    plan.add("dev", "/dev")
    plan.add("tmpfs", "/tmp", mode=0o1777)
    plan.add("dir", "/etc")
    for name in SYSTEM_ETC:
        host = "/etc/" + name
        if matcher.paths and matcher.hides_by_path(host):
            plan.hidden.append(host)
        elif os.path.exists(host):  # a dangling link is left out
            plan.add("ro-bind", host, host)
    generated = etc_files(hosts=hosts_file(hostname, pinned), resolver=resolver, hostname=hostname)
    kept = _generated_over_exposures(plan, policy, generated)
    # An exposure of /etc itself (or of /) would cover the generated files: they are then
    # mounted over it, after the exposures (late), where the host has the file.
    etc_exposed = any(_under("/etc", r.path) for r in (*policy.expose_ro, *policy.expose_rw))
    late: list[tuple[str, bytes]] = []
    for name, data in generated.items():
        if name == "resolv.conf" and not data:
            continue
        if etc_exposed:
            late.append((name, data))
            continue
        plan.add("file", "/etc/" + name, data=data, mode=0o644)

    # The working directory must exist. When nothing below exposes it, it is an empty tmpfs,
    # made before the interpreter and the exposures (which may lie below it: a venv or data in
    # the project) and remounted read-only after them, so that it hides none of them.
    cwd = launch.cwd
    interpreter = list(interpreter_paths(launch))
    tmpdir = launch.context.tmpdir
    holders = [*interpreter, *(r.path for r in (*policy.expose_ro, *policy.expose_rw))]
    if tmpdir:
        holders.append(tmpdir)
    placeholder = not any(_covered(m, cwd) for m in plan.mounts) and not any(
        _under(cwd, path) for path in holders
    )
    if placeholder:
        plan.add("tmpfs", cwd, mode=0o755)

    # 2. interpreter
    for path in interpreter:
        plan.add("ro-bind", path, path)

    # 3. exposures, shallowest first (deeper exposures override)
    _plan_exposures(plan, launch, policy, skip=kept)

    # 3b. generated /etc files over an exposed /etc
    for name, data in late:
        host = "/etc/" + name
        if os.path.isfile(host) and not os.path.islink(host) and host not in plan.hidden:
            plan.add("file", host, data=data, mode=0o644)
        else:
            plan.warnings.append(
                f"/etc is exposed and the host has no plain file {host}: the sandbox's "
                f"generated {host} cannot be put over it (the host's is shown, if any)"
            )

    # 4. private temporary directory
    if tmpdir and os.path.isdir(tmpdir):
        plan.add("bind", tmpdir, tmpdir)

    # 4a. --denials=FILE: the Python layer appends every refusal to it from inside the sandbox,
    # wherever the file lies (as under landlock); created first, since the sandbox may not be
    # able to create a file in its directory.
    denials = launch.context.denials_file
    if denials:
        denials = os.path.abspath(denials)
        try:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
            os.close(os.open(denials, flags, 0o644))
        except OSError as exc:
            raise ConfigError(f"--denials={denials}: cannot create it: {exc.strerror}") from None
        plan.add("bind", denials, denials)

    # 4b. exposures written through a symbolic link exist under the name the rule gives
    _recreate_links(plan, policy, cwd)

    # 4c. default read-only grants (the interpreter's installation, the /etc defaults) that a
    # writable exposure covers stay read-only, as under the Python layer (the longer default
    # decides): bound read-only over themselves again.
    exact = {r.path for r in (*policy.expose_ro, *policy.expose_rw)}
    defaults_ro = [*interpreter, *("/etc/" + name for name in SYSTEM_ETC)]
    for path in defaults_ro:
        if (
            path not in exact
            and os.path.exists(path)
            and _writable_exposure(path, policy)
            and not any(_under(path, h) for h in plan.hidden)
        ):
            plan.add("ro-bind", path, path)

    # 5. the working directory's placeholder: read-only (even below the private /tmp)
    if placeholder:
        plan.add("remount-ro", cwd)

    # 5b. the host's Unix sockets in read-only parts of the tree: covered by an empty file
    _cover_read_only_sockets(plan)

    # 6. rule files read-only over themselves, where a writable exposure holds them (below a
    # read-only one they are read-only already, and bind-mounting onto a read-only tree fails)
    protected = [*policy.rule_files]
    if policy.main_file:
        protected.append(policy.main_file)
    for include in policy.includes:
        if include.status == "missing" and _writable_exposure(include.resolved, policy):
            # Nothing to bind read-only (a mount point would create the file on the host).
            plan.warnings.append(
                f"{include.origin}: included rule file {include.resolved} does not exist and "
                "lies in a writable exposure: creating it would add rules to the next run "
                "(the Python layer refuses that; with py-sandbox=false nothing does)"
            )
    for path in dict.fromkeys(protected):
        if (
            os.path.isfile(path)
            and _writable_exposure(path, policy)
            and path not in plan.hidden
            and not any(_under(path, h) for h in plan.hidden)
        ):
            plan.add("ro-bind", path, path)
    return plan


def host_socket_paths(table: str = "/proc/net/unix") -> list[str]:
    """The paths of the Unix sockets bound on this host (its network namespace), from the
    kernel's table: the live ones a sandbox could connect to. Abstract names and relative
    paths (a server that bound one from its own directory) are not paths to look at."""

    try:
        with open(table, "rb") as handle:
            lines = handle.read().splitlines()[1:]
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) == 8 and fields[7].startswith(b"/"):
            found.append(os.fsdecode(fields[7]))
    return found


def _cover_read_only_sockets(plan: TreePlan) -> None:
    """Issue 23, class 5: a read-only bind mount refuses writes to files, not ``connect()`` or
    ``sendto()`` on a socket inode, and connecting is a write of the socket's path (SPEC 2.4:
    judged by the file rules). Each socket bound on this host that the tree shows read-only
    (the last bind holding it is read-only) is covered by an empty read-only file: connecting
    then fails (``ECONNREFUSED``). A socket bound later, or by a process of another network
    namespace, is not in the table: said at start (``files.special-read-only``)."""

    binds = [m for m in plan.mounts if m.kind in ("ro-bind", "bind")]
    if not binds:
        return
    for bound in dict.fromkeys(host_socket_paths()):
        # The tree's destinations are resolved paths; the table shows the path as bound.
        path = os.path.join(os.path.realpath(os.path.dirname(bound)), os.path.basename(bound))
        holder = None
        for mount in binds:
            if _under(path, mount.dest):
                holder = mount
        if holder is None or holder.kind != "ro-bind" or path in plan.hidden:
            continue
        if any(_under(path, hidden) for hidden in plan.hidden):
            continue
        try:
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                continue
        except OSError:
            continue
        plan.add("file", path, data=b"", mode=0o444)


def _generated_over_exposures(
    plan: TreePlan, policy: Policy, generated: dict[str, bytes]
) -> frozenset[str]:
    """Issue 11, point 6: an exposure that names a generated /etc file (learning writes
    ``expose-ro=/etc/hosts``, ``/etc/passwd``, ``/etc/group``). Per file:

    - ``passwd``, ``group``: the host's file replaces the generated one (the rule grants reading
      the host's account database, as it does under the Python layer and landlock);
    - ``hosts``: python-sb's entries (loopback, the host name, the names pinned from ``net=``
      rules, which the ruleset allows) come first, then the host's entries that name none of
      them;
    - ``resolv.conf``, ``nsswitch.conf``, ``hostname``: the generated file stays (the sandbox's
      own resolver and name), and a warning says so.

    Changes ``generated`` in place; returns the exposed paths not to bind (a generated file
    stands there).
    """

    exposed = {rule.path: rule for rule in (*policy.expose_ro, *policy.expose_rw)}
    kept: set[str] = set()
    whole = [rule for path, rule in exposed.items() if _under("/etc", path)]
    for name in list(generated):
        path = "/etc/" + name
        rule = exposed.get(path)
        if rule is None and whole:
            # /etc exposed whole: the host's accounts, python-sb's hosts entries first, and
            # the sandbox's own resolver and name (put over the exposure, see build_plan).
            if name in ("passwd", "group"):
                del generated[name]
            elif name == "hosts":
                generated[name] = _merged_hosts(generated[name], path)
            continue
        if rule is None:
            continue
        if name in ("passwd", "group"):
            del generated[name]
            continue
        kept.add(path)
        if name == "hosts":
            generated[name] = _merged_hosts(generated[name], path)
        else:
            plan.warnings.append(
                f"{rule.origin}: {rule.text}: the sandbox's {path} is written by python-sb "
                "(its own resolver and host name) and stays: the host's file is not shown"
            )
    return frozenset(kept)


def _merged_hosts(own: bytes, host_file: str) -> bytes:
    """python-sb's /etc/hosts lines, then the host's lines that name none of the same names
    (a pinned name keeps the address the ruleset allows)."""

    names: set[str] = set()
    for line in own.decode().splitlines():
        names.update(line.split("#", 1)[0].split()[1:])
    try:
        with open(host_file, encoding="utf-8", errors="replace") as handle:
            host_lines = handle.read().splitlines()
    except OSError:
        return own
    extra = [
        line
        for line in host_lines
        if line.split("#", 1)[0].split()[1:]
        and not names.intersection(line.split("#", 1)[0].split()[1:])
    ]
    if not extra:
        return own
    header = "# the host's entries (expose-ro=/etc/hosts)\n"
    return own + (header + "\n".join(extra) + "\n").encode()


def given_path(rule: PathRule, cwd: str) -> str:
    """The path an exposure names, absolute and normalised but with its symbolic links kept
    (``rule.path`` has them resolved)."""

    written = rule.written or rule.path
    if written.startswith("~"):
        written = os.path.expanduser(written)
    return os.path.normpath(os.path.join(cwd, written))


def links_along(path: str) -> list[tuple[str, str]]:
    """The symbolic links met while resolving ``path`` on the host, in order, as ``(where,
    target)`` with ``where`` free of links itself (``ConfigError`` on a loop)."""

    found: list[tuple[str, str]] = []
    pending = [p for p in reversed(path.split("/")) if p]
    current = "/"
    while pending:
        part = pending.pop()
        if part == ".":
            continue
        if part == "..":
            current = os.path.dirname(current)
            continue
        candidate = os.path.join(current, part)
        if os.path.islink(candidate):
            target = os.readlink(candidate)
            found.append((candidate, target))
            if len(found) > 40:
                raise ConfigError(f"{path}: too many levels of symbolic links")
            if target.startswith("/"):
                current = "/"
            pending.extend(p for p in reversed(target.split("/")) if p)
        else:
            current = candidate
    return found


def _recreate_links(plan: TreePlan, policy: Policy, cwd: str) -> None:
    """Issue 11, point 7: ``expose-ro=~/project`` where ``~/project`` is a link to elsewhere
    binds the target (rules hold resolved paths); the link itself is recreated in the tree, so
    that the program finds the path under the name the rule gives. A link already inside a
    bound tree is there; one whose place is taken (a mount at or below it) is left out with a
    warning."""

    made: set[str] = set()
    for rule in (*policy.expose_ro, *policy.expose_rw):
        given = given_path(rule, cwd)
        if given == rule.path or rule.path in plan.hidden:
            continue
        for where, target in links_along(given):
            if where in made:
                continue
            if any(
                (m.kind in ("ro-bind", "bind") and _under(where, m.dest))
                or (m.kind in ("proc", "dev") and _under(where, m.dest))
                for m in plan.mounts
            ):
                continue  # inside a bound tree: the host's link is there already
            if any(_under(m.dest, where) for m in plan.mounts):
                plan.warnings.append(
                    f"{rule.origin}: {rule.text}: the link {where} -> {target} cannot be "
                    "recreated in the sandbox (something else is mounted there): the program "
                    f"finds it as {rule.path} only"
                )
                continue
            plan.add("symlink", where, target)
            made.add(where)


def _writable_exposure(path: str, policy: Policy) -> bool:
    """Whether the longest exposure holding ``path`` is read-write (SPEC §2.5; on equal paths
    read-write wins, as in ``_plan_exposures``)."""

    best = -1
    writable = False
    for rules, rw in ((policy.expose_ro, False), (policy.expose_rw, True)):
        for rule in rules:
            size = len(rule.path)
            if _under(path, rule.path) and (size > best or (rw and size == best)):
                best, writable = size, rw
    return writable


def _rule_error(rule: PathRule, message: str) -> ConfigError:
    from pysandboxes.providers._ns_common import rule_error

    return rule_error(rule.origin, rule.text, message)


def _covered(mount: Mount, path: str) -> bool:
    """Whether ``path`` exists in the tree once ``mount`` is made (a bind holds what the host
    holds below it; a tmpfs or a created directory holds only itself)."""

    if mount.kind in ("ro-bind", "bind"):
        return _under(path, mount.dest)
    return mount.kind in ("tmpfs", "dir") and path == mount.dest


def _plan_exposures(
    plan: TreePlan, launch: Launch, policy: Policy, skip: frozenset[str] = frozenset()
) -> None:
    exposures: list[tuple[str, bool, PathRule]] = []
    for rule in policy.expose_ro:
        exposures.append((rule.path, False, rule))
    for rule in policy.expose_rw:
        exposures.append((rule.path, True, rule))
    # Same path in both lists: read-write wins (it is the more specific grant of the two).
    by_path: dict[str, tuple[bool, PathRule]] = {}
    for path, rw, rule in exposures:
        if not os.path.isabs(path):
            raise _rule_error(rule, "exposed paths must be absolute")
        previous = by_path.get(path)
        by_path[path] = (rw or (previous[0] if previous else False), rule)
    ordered = sorted(by_path, key=lambda p: (p.rstrip("/").count("/"), p))
    matcher = IgnoreMatcher(policy.ignore, launch.cwd)
    for path in ordered:
        rw, rule = by_path[path]
        if path in skip:
            continue  # a generated /etc file stands there (see _generated_over_exposures)
        if not _exists(path):
            # The policy loader reports missing paths the user wrote; a learned one is skipped.
            plan.warnings.append(f"{rule.origin}: {rule.text}: {path} does not exist, skipped")
            continue
        if path == "/" and rw:
            raise _rule_error(rule, "exposing / read-write is refused")
        hidden: list[str] = []
        if matcher:
            deeper = [p for p in ordered if p != path and _under(p, path)]
            hidden = find_hidden(path, matcher, skip=deeper)
        if path in hidden:
            plan.hidden.append(path)
            continue
        if not hidden:
            plan.add("bind" if rw else "ro-bind", path, path)
            continue
        plan.hidden.extend(hidden)
        _rebuild(plan, path, rw, hidden, rule)


def _rebuild(plan: TreePlan, directory: str, rw: bool, hidden: list[str], rule: PathRule) -> None:
    """Recreate ``directory`` as a tmpfs holding every entry except the hidden ones."""

    try:
        mode = stat.S_IMODE(os.stat(directory).st_mode)
    except OSError:
        mode = 0o755
    plan.add("tmpfs", directory, mode=mode)
    if rw:
        plan.warnings.append(
            f"{rule.origin}: {rule.text}: {directory} holds ignore= entries, so it is rebuilt: "
            "files the program creates directly in it are kept in memory only"
        )
    try:
        names = sorted(os.listdir(directory))
    except OSError as exc:
        raise _rule_error(rule, f"cannot list {directory}: {exc}") from None
    for name in names:
        entry = os.path.join(directory, name)
        if entry in hidden:
            continue
        below = [h for h in hidden if _under(h, entry) and h != entry]
        if os.path.islink(entry):
            plan.add("symlink", entry, os.readlink(entry))
        elif below and os.path.isdir(entry):
            _rebuild(plan, entry, rw, below, rule)
        else:
            plan.add("bind" if rw else "ro-bind", entry, entry)
    if not rw:
        plan.add("remount-ro", directory)
