"""Can this process create the namespaces a sandbox needs? A real attempt, not a guess.

Used by ``bwrap`` and ``unshare`` availability(): a forked child calls ``unshare(2)`` with the
user, mount, PID, IPC, UTS and network flags and reports the errno. The usual reasons it fails
(unprivileged user namespaces disabled by sysctl, an AppArmor restriction, a container's seccomp
profile) are named with what to change.
"""

from __future__ import annotations

import errno
import os
import sys

from pysandboxes.providers.base import memo

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

SANDBOX_FLAGS = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
SANDBOX_FLAGS |= CLONE_NEWNET


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return None


def namespace_problem() -> tuple[str, str]:
    """``("", "")`` when the namespaces can be created, else ``(reason, what to change)``."""

    if not os.path.exists("/proc/self/ns/user"):
        return (
            "this kernel has no user namespaces (CONFIG_USER_NS)",
            "use a kernel built with user namespaces, or os-sandbox=landlock",
        )
    if _static_ok():
        return "", ""
    code = _try_unshare(SANDBOX_FLAGS)
    if code == 0:
        return "", ""
    reason = f"cannot create namespaces: {os.strerror(code)}"
    if _read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
        return (
            reason + " (kernel.unprivileged_userns_clone=0)",
            "sysctl -w kernel.unprivileged_userns_clone=1",
        )
    if _read("/proc/sys/user/max_user_namespaces") == "0":
        return (
            reason + " (user.max_user_namespaces=0)",
            "sysctl -w user.max_user_namespaces=15000",
        )
    if _read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
        return (
            reason + " (AppArmor restricts unprivileged user namespaces)",
            "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile "
            "allowing userns for bwrap/python-sb",
        )
    if code == errno.EPERM:
        return (
            reason + " (a container's seccomp profile or missing privileges)",
            "run the container with a seccomp profile that allows unshare/clone of namespaces "
            "(docker: --security-opt seccomp=unconfined, or podman's default), or use "
            "os-sandbox=landlock",
        )
    return reason, "check the kernel's namespace settings (user.max_*_namespaces)"


def _static_ok() -> bool:
    """True when the settings alone show that namespaces can be created, so that the common case
    costs no fork: no seccomp filter on this process (a container's profile could refuse
    ``unshare``) and, for an unprivileged user, none of the switches that turn user namespaces
    off. Anything else is settled by a real attempt."""

    status = _read("/proc/self/status") or ""
    seccomp = [line.split()[1] for line in status.splitlines() if line.startswith("Seccomp:")]
    if seccomp != ["0"]:
        return False
    if os.geteuid() == 0:
        return True
    return (
        _read("/proc/sys/kernel/unprivileged_userns_clone") in (None, "1")
        and _read("/proc/sys/user/max_user_namespaces") not in (None, "0")
        and _read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") in (None, "0")
    )


@memo
def cached_namespace_problem() -> tuple[str, str]:
    return namespace_problem()


@memo
def pid_namespace_problem() -> str:
    """``""`` when this process can make a user and a PID namespace (``launch/spawn.py`` keeps
    a partial-mode worker's processes in one, so that they end with it), else why not."""

    if not (os.path.exists("/proc/self/ns/user") and os.path.exists("/proc/self/ns/pid")):
        return "this kernel has no user or PID namespaces"
    code = _try_unshare(CLONE_NEWUSER | CLONE_NEWPID)
    return "" if code == 0 else f"cannot create a user and a PID namespace: {os.strerror(code)}"


def _try_unshare(flags: int) -> int:
    """errno of ``unshare(flags)`` in a short-lived child (0 = it worked)."""

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            os.close(read_end)
            from pysandboxes.providers import _linux  # binds syscall(2) without ctypes

            try:
                _linux.syscall("unshare", flags)
                code = 0
            except OSError as exc:
                code = exc.errno or errno.EINVAL
            os.write(write_end, str(code).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        data = os.read(read_end, 16)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    try:
        return int(data or b"1")
    except ValueError:
        return errno.EINVAL
