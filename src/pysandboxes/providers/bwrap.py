"""``os-sandbox=bwrap``: the program runs under bubblewrap (SPEC §5.1).

The file system is built from nothing (``_ns_mounts``): only the system files a Python program
needs, the interpreter, the exposed paths (read-only or read-write) and a private ``/tmp`` exist;
``ignore=`` entries are absent; rule files are read-only. The program gets its own user, PID,
IPC, UTS and network namespaces, a new session (no terminal injection through ``TIOCSTI``),
``no_new_privs`` (bubblewrap sets it unconditionally), the seccomp filter of
``providers/seccomp.py`` passed by descriptor, dies with its parent, and sees only the
environment the launcher built from ``env=`` (bubblewrap passes its own environment, which is
exactly that: ``Prepared.env``; nothing is put on the command line, where other users could
read it).

Only options that bubblewrap 0.8.0 (Debian 12) has are used; ``--disable-userns`` (new in 0.8)
is added when the installed version has it.

Network: with no ``net=`` rule the namespace has loopback only. With rules, ``netns`` prepares
a namespace with pasta and an nftables ruleset, and bubblewrap is started inside it.

Signals: bubblewrap passes none on, so python-sb stays as its parent and delivers them to the
program itself (``bwrap_signals``).
"""

from __future__ import annotations

import os
import sys

from pysandboxes.errors import ConfigError
from pysandboxes.providers import _ns_common
from pysandboxes.providers._ns_init import PROC_READ_ONLY
from pysandboxes.providers._ns_mounts import TreePlan, build_plan
from pysandboxes.providers._ns_probe import cached_namespace_problem
from pysandboxes.providers.base import Availability, Launch, Prepared, memo
from pysandboxes.providers.bwrap_signals import BwrapSignalRelay

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

TYPE_CHECKING = False  # as typing.TYPE_CHECKING: typing, functools, collections stay unloaded
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


INSTALL_HINT = "apt-get install bubblewrap (Debian, Ubuntu) or dnf install bubblewrap (Fedora)"
#: Options this provider cannot do without (all in bubblewrap >= 0.5).
REQUIRED_OPTIONS = (
    "--ro-bind-data",
    "--perms",
    "--die-with-parent",
    "--new-session",
    "--seccomp",
    "--info-fd",
    "--cap-drop",
)
#: Used when present: ``--disable-userns`` came with 0.8.
OPTIONAL_OPTIONS = ("--disable-userns",)


@memo
def bwrap_path() -> str | None:
    return _ns_common.which("bwrap")


@memo
def bwrap_options(path: str) -> frozenset[str]:
    """Which of the options this provider cares about the installed bwrap knows.

    Read from the executable itself (option names are string literals in it), which costs far
    less than running ``bwrap --version`` at every start.
    """

    try:
        with open(os.path.realpath(path), "rb") as handle:
            binary = handle.read()
    except OSError:
        return frozenset()
    return frozenset(
        opt for opt in (*REQUIRED_OPTIONS, *OPTIONAL_OPTIONS) if opt.encode() + b"\0" in binary
    )


def mount_options(plan: TreePlan) -> tuple[list[str], list[int]]:
    """bubblewrap options for ``plan``, and the descriptors they read (generated files)."""

    args: list[str] = []
    fds: list[int] = []
    for mount in plan.mounts:
        kind, dest = mount.kind, mount.dest
        if kind == "ro-bind":
            args += ["--ro-bind", mount.source, dest]
        elif kind == "bind":
            args += ["--bind", mount.source, dest]
        elif kind == "dir":
            args += ["--dir", dest]
        elif kind == "tmpfs":
            args += ["--perms", f"{mount.mode:o}", "--tmpfs", dest]
        elif kind == "symlink":
            args += ["--symlink", mount.source, dest]
        elif kind == "proc":
            args += ["--proc", dest]
            # bubblewrap 0.8 leaves these writable, and uid 0 in the sandbox is the host's uid 0
            # when python-sb runs as root: host-wide sysctls would be writable. Cover them with
            # the host's entries, read-only.
            for name in PROC_READ_ONLY:
                if os.path.exists(f"/proc/{name}"):
                    args += ["--ro-bind", f"/proc/{name}", f"{dest}/{name}"]
        elif kind == "dev":
            args += ["--dev", dest]
        elif kind == "remount-ro":
            args += ["--remount-ro", dest]
        elif kind == "file":
            fd = _ns_common.data_fd(mount.data, dest)
            fds.append(fd)
            args += ["--perms", f"{mount.mode:o}", "--ro-bind-data", str(fd), dest]
        else:  # pragma: no cover - Mount.kind is a closed Literal
            raise AssertionError(kind)
    return args, fds


def _own_process_group() -> None:
    os.setpgid(0, 0)


class BwrapProvider(_ns_common.NamespaceProvider):
    name = "bwrap"

    def availability(self) -> Availability:
        path = bwrap_path()
        if path is None:
            return Availability(False, "bwrap (bubblewrap) is not installed", INSTALL_HINT)
        known = bwrap_options(path)
        lacking = [opt for opt in REQUIRED_OPTIONS if opt not in known]
        if lacking:
            return Availability(
                False,
                f"{path} is too old or not bubblewrap: it lacks {', '.join(lacking)} "
                "(bubblewrap >= 0.5 is needed)",
                INSTALL_HINT,
            )
        reason, hint = cached_namespace_problem()
        if reason:
            return Availability(False, reason, hint)
        return Availability(True)

    def prepare(self, launch: Launch) -> Prepared:
        path = bwrap_path()
        if path is None:
            raise ConfigError(f"os-sandbox=bwrap: bwrap is not installed ({INSTALL_HINT})")
        policy = launch.policy
        hostname = _ns_common.hostname(policy, self.name)
        network = _ns_common.start_network(
            policy, self.name, launch.context.denials_file, launch.context.tmpdir
        )
        try:
            plan = build_plan(
                launch,
                hostname=hostname,
                pinned=network.pinned if network else (),
                resolver=network.resolver if network else None,
            )
            args, data_fds = mount_options(plan)
        except BaseException:
            if network:
                network.stop()
            raise
        argv: list[str] = []
        if network:
            argv += network.enter_argv()
        argv += [path, "--unshare-user"]
        if "--disable-userns" in bwrap_options(path):
            argv.append("--disable-userns")
        argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        if network:
            # bubblewrap runs as the holder's root: show the program the user's own ids, as
            # without a network.
            argv += ["--uid", str(os.getuid()), "--gid", str(os.getgid())]
        else:
            argv.append("--unshare-net")
        # No capability for the program, even when bwrap's own user is root (python-sb run as
        # root, or the network holder's root): bwrap keeps them all for such a caller.
        argv += ["--cap-drop", "ALL"]
        argv += ["--hostname", hostname, "--die-with-parent", "--new-session"]
        relay = BwrapSignalRelay()
        argv += ["--info-fd", str(relay.info_fd)]
        argv += args
        argv += ["--remount-ro", "/", "--chdir", launch.cwd]
        seccomp = _ns_common.seccomp_fd()
        warnings = list(plan.warnings) + (list(network.plan.warnings) if network else [])
        if seccomp is None:
            warnings.append(
                "os-sandbox=bwrap: the seccomp filter module is not available; running without it"
            )
        else:
            data_fds.append(seccomp)
            argv += ["--seccomp", str(seccomp)]
        argv += ["--", *_without_pwd(launch.child_argv, launch.env)]
        # python-sb stays as the parent: bubblewrap passes no signal on (bwrap_signals.py), and
        # it runs in a process group of its own so that the terminal's signals do not end it.
        prepared = Prepared(
            argv=argv,
            # With an edge proxy, the proxy variables name it (they win over env= rules).
            env={**launch.env, **(network.env if network else {})},
            pass_fds=(*launch.pass_fds, *data_fds, relay.info_fd),
            pre_exec=[_own_process_group],
            needs_parent=True,
            warnings=warnings,
            relay=relay,
        )
        if network:
            prepared.cleanup.append(network.stop)
        return prepared


PROVIDER = BwrapProvider()


#: coreutils' env(1), in the /usr tree every bwrap sandbox holds.
ENV_PROGRAM = "/usr/bin/env"


def _without_pwd(child_argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """bubblewrap sets ``PWD`` in the program's environment after ``--chdir``, whatever it was
    given: when no ``env=`` rule grants ``PWD``, start the program through ``env -u PWD`` so
    that it sees only granted variables, as under every other provider (SPEC §3.4)."""

    if "PWD" in env or not os.path.exists(ENV_PROGRAM):
        return list(child_argv)
    return [ENV_PROGRAM, "-u", "PWD", *child_argv]
