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
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from functools import cache

from pysandboxes.errors import ConfigError
from pysandboxes.policy.model import Policy
from pysandboxes.providers import _ns_common
from pysandboxes.providers._ns_mounts import TreePlan, build_plan
from pysandboxes.providers._ns_probe import cached_namespace_problem
from pysandboxes.providers.base import Availability, Launch, Prepared

INSTALL_HINT = "apt-get install bubblewrap (Fedora: dnf install bubblewrap)"
MIN_VERSION = (0, 4, 0)


@cache
def bwrap_path() -> str | None:
    return shutil.which("bwrap")


@cache
def bwrap_version(path: str) -> tuple[int, ...] | None:
    """The installed version (``bwrap --version``: ``bubblewrap 0.8.0``), None if unreadable."""

    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", out)
    if not match:
        return None
    return tuple(int(part or 0) for part in match.groups())


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


class BwrapProvider:
    name = "bwrap"
    kernel = True

    def availability(self) -> Availability:
        path = bwrap_path()
        if path is None:
            return Availability(False, "bwrap (bubblewrap) is not installed", INSTALL_HINT)
        version = bwrap_version(path)
        if version is not None and version < MIN_VERSION:
            shown = ".".join(map(str, version))
            return Availability(False, f"bubblewrap {shown} is too old (need >= 0.4)", INSTALL_HINT)
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
        network = _ns_common.start_network(policy, self.name)
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
        version = bwrap_version(path) or (0, 0, 0)
        argv: list[str] = []
        if network:
            argv += network.enter_argv()
        argv += [path, "--unshare-user"]
        if version >= (0, 8, 0):
            argv.append("--disable-userns")
        argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        if not network:
            argv.append("--unshare-net")
        argv += ["--hostname", hostname, "--die-with-parent", "--new-session"]
        argv += args
        argv += ["--remount-ro", "/", "--chdir", launch.cwd]
        seccomp = _ns_common.seccomp_fd()
        warnings = list(plan.warnings)
        if seccomp is None:
            warnings.append(
                "os-sandbox=bwrap: the seccomp filter module is not available; running without it"
            )
        else:
            data_fds.append(seccomp)
            argv += ["--seccomp", str(seccomp)]
        argv += ["--", *launch.child_argv]
        prepared = Prepared(
            argv=argv,
            env=dict(launch.env),
            pass_fds=(*launch.pass_fds, *data_fds),
            warnings=warnings,
        )
        if network:
            prepared.needs_parent = True
            prepared.cleanup.append(network.stop)
        return prepared

    def explain(self, policy: Policy) -> Sequence[str]:
        return _ns_common.explain_lines(policy, self.name)


PROVIDER = BwrapProvider()
