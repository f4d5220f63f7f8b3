"""``os-sandbox=unshare``: the isolation of ``bwrap`` built with namespaces directly.

No bubblewrap: ``python-sb`` execs a small setup step (``_ns_init.py``, run by the same
interpreter with ``-I -S``) that calls ``unshare(2)`` for new user, mount, PID, IPC, UTS, cgroup
and network namespaces, builds the same mount tree as ``bwrap`` (``_ns_mounts``: tmpfs root,
bind mounts made read-only with ``mount_setattr(2)`` recursively, ``pivot_root``), and execs the
interpreter with no capabilities, ``no_new_privs`` and the seccomp filter. The working directory
is mounted only as the rules say (an empty read-only directory otherwise).

The setup data (mounts, argv, environment) travels in a memfd, never on a command line.
Requirements: user namespaces, and Linux >= 5.12 (``mount_setattr``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from pysandboxes.errors import ConfigError
from pysandboxes.providers import _ns_common
from pysandboxes.providers._ns_init import SYSCALL_NUMBERS
from pysandboxes.providers._ns_mounts import TreePlan, build_plan
from pysandboxes.providers._ns_probe import cached_namespace_problem
from pysandboxes.providers.base import Availability, Launch, Prepared

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

TYPE_CHECKING = False  # as typing.TYPE_CHECKING: typing, functools, collections stay unloaded
if TYPE_CHECKING:
    from collections.abc import Callable


INIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ns_init.py")
MIN_KERNEL = (5, 12)


def kernel_version() -> tuple[int, int]:
    release = os.uname().release
    parts = release.split(".")
    try:
        return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or 0)
    except (IndexError, ValueError):
        return (0, 0)


def encode_spec(
    plan: TreePlan,
    launch: Launch,
    *,
    hostname: str,
    seccomp: bytes,
    join_user: str = "",
    join_net: str = "",
    parent_pid: int = 0,
    extra_env: Mapping[str, str] | None = None,
) -> bytes:
    """The setup step's input: NUL-separated tokens, read by ``_ns_init.Spec``. ``extra_env``
    (the edge proxy's variables) wins over the program's environment."""

    env = {**launch.env, **(extra_env or {})}

    tokens: list[str] = [
        "pysb-ns-1",
        hostname,
        launch.cwd,
        join_user,
        join_net,
        str(parent_pid),
        str(os.getuid()),
        str(os.getgid()),
        seccomp.hex(),
        str(len(launch.child_argv)),
        *launch.child_argv,
        str(len(env)),
        *(f"{key}={value}" for key, value in env.items()),
        str(len(plan.mounts)),
    ]
    for mount in plan.mounts:
        tokens += [mount.kind, mount.dest, mount.source, mount.data.hex(), f"{mount.mode:o}"]
    encoded = [os.fsencode(token) for token in tokens]
    if any(b"\0" in token for token in encoded):
        raise ConfigError("os-sandbox=unshare: a path, argument or variable contains a NUL byte")
    return b"\0".join(encoded)


def _enter_step(spec: bytes, parent: int) -> Callable[[], None]:
    """The pre-exec step that builds the sandbox in python-sb's own process."""

    from pysandboxes.providers import _ns_init

    return lambda: _ns_init.enter_in_process(spec, parent)


class UnshareProvider(_ns_common.NamespaceProvider):
    name = "unshare"

    def availability(self) -> Availability:
        if os.uname().machine not in SYSCALL_NUMBERS:
            return Availability(
                False,
                f"os-sandbox=unshare supports x86_64 and aarch64, not {os.uname().machine}",
                "use os-sandbox=bwrap",
            )
        if kernel_version() < MIN_KERNEL:
            return Availability(
                False,
                f"Linux {os.uname().release} lacks mount_setattr (needs >= 5.12)",
                "upgrade the kernel, or use os-sandbox=bwrap",
            )
        reason, hint = cached_namespace_problem()
        if reason:
            return Availability(False, reason, hint)
        return Availability(True)

    def prepare(self, launch: Launch) -> Prepared:
        policy = launch.policy
        hostname = _ns_common.hostname(policy, self.name)
        if not launch.child_argv or not os.path.isabs(launch.child_argv[0]):
            raise ConfigError("os-sandbox=unshare: the interpreter path must be absolute")
        seccomp = _ns_common.seccomp_program()
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
            spec = encode_spec(
                plan,
                launch,
                hostname=hostname,
                seccomp=seccomp or b"",
                join_user=network.join_user if network else "",
                join_net=network.join_net if network else "",
                # With a network python-sb stays as the supervising parent.
                parent_pid=os.getpid() if network else 0,
                extra_env=network.env if network else None,
            )
            spec_fd = _ns_common.data_fd(spec, "unshare-spec") if network else -1
        except BaseException:
            if network:
                network.stop()
            raise
        warnings = list(plan.warnings) + (list(network.plan.warnings) if network else [])
        if seccomp is None:
            warnings.append(
                "os-sandbox=unshare: the seccomp filter module is not available; running without it"
            )
        if network is None:
            # No helper to supervise: python-sb itself becomes the sandbox's outer process
            # (pre_exec) and execs the interpreter in the program's process.
            return Prepared(
                argv=list(launch.child_argv),
                env=dict(launch.env),
                pass_fds=tuple(launch.pass_fds),
                pre_exec=[_enter_step(spec, os.getpid())],
                warnings=warnings,
            )
        return Prepared(
            argv=[sys.executable, "-I", "-S", INIT, str(spec_fd)],
            env=dict(launch.env),
            pass_fds=(*launch.pass_fds, spec_fd),
            warnings=warnings,
            needs_parent=True,
            cleanup=[network.stop],
        )


PROVIDER = UnshareProvider()
