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
    code, stage = _try_unshare(SANDBOX_FLAGS)
    if code == 0:
        return "", ""
    from pysandboxes.providers import _container

    if stage == "proc":
        # The namespaces were made, but a new /proc could not be mounted in them: a container
        # runtime's masked /proc paths (podman's and docker's defaults) forbid it, and both
        # bwrap and unshare mount one for their PID namespace.
        return (
            f"cannot mount a new /proc in a PID namespace: {os.strerror(code)} (a container "
            "whose /proc has masked paths?)",
            _container.runtime_hint("proc")
            or "run where /proc has no masked paths, or use os-sandbox=landlock",
        )
    if stage == "hostname":
        # Podman's default seccomp profile allows sethostname only with CAP_SYS_ADMIN (in the
        # container's own user namespace), so a nested UTS namespace cannot be named.
        return (
            f"cannot set the host name of a UTS namespace: {os.strerror(code)} (a container's "
            "seccomp profile that allows sethostname only with CAP_SYS_ADMIN?)",
            _container.runtime_hint("seccomp-ns")
            or "allow sethostname in the seccomp profile, or use os-sandbox=landlock",
        )
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
            _container.runtime_hint("userns")
            or "run the container with a seccomp profile that allows unshare/clone of namespaces "
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
    if _static_ok():  # the settings alone say it works: no fork of the caller to ask
        return ""
    code, _stage = _try_unshare(CLONE_NEWUSER | CLONE_NEWPID, mount_proc=False)
    return "" if code == 0 else f"cannot create a user and a PID namespace: {os.strerror(code)}"


MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REC = 0x4000
MS_PRIVATE = 0x40000


def _try_unshare(flags: int, *, mount_proc: bool = True) -> tuple[int, str]:
    """``(errno, stage)`` of making the sandbox's namespaces in a short-lived child: ``(0, "")``
    when it worked, else the errno and the step that failed, ``unshare`` or ``proc`` (mounting a
    new ``/proc`` from inside the new PID namespace, as bwrap and the unshare provider do; a
    container's masked ``/proc`` refuses it although ``unshare`` itself succeeds). Without
    ``mount_proc`` only the ``unshare`` is tried (a partial-mode worker's own PID namespace
    mounts nothing)."""

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            os.close(read_end)
            from pysandboxes.providers import _linux  # binds syscall(2) without ctypes

            result = "0 "
            try:
                _linux.syscall("unshare", flags)
            except OSError as exc:
                result = f"{exc.errno or errno.EINVAL} unshare"
            if result == "0 " and flags & CLONE_NEWPID and mount_proc:
                result = _mount_proc_in_child(_linux)
            os.write(write_end, result.encode())
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        data = os.read(read_end, 32)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    code, _, stage = data.decode("ascii", "replace").partition(" ")
    try:
        return int(code or "1"), stage
    except ValueError:
        return errno.EINVAL, "unshare"


def _mount_proc_in_child(linux: object) -> str:  # pragma: no cover - runs in the probe's child
    """In the probe's child, after ``unshare``: fork the new PID namespace's first process, mount
    a ``/proc`` there (in the private mount namespace: nothing outside sees it) and name the new
    UTS namespace, as the providers do; ``"0 "`` or ``"ERRNO STAGE"``."""

    syscall = linux.syscall  # type: ignore[attr-defined]
    inner_read, inner_write = os.pipe()
    inner = os.fork()
    if inner == 0:
        code = 0
        try:
            os.close(inner_read)
            stage = "proc"
            try:
                syscall("mount", None, b"/", None, MS_REC | MS_PRIVATE, None)
                syscall("mount", b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
                stage = "hostname"  # both providers name the sandbox's host "python-sb"
                syscall("sethostname", b"python-sb", 9)
            except OSError as exc:
                code = exc.errno or errno.EINVAL
            os.write(inner_write, f"{code} {stage}".encode())
        finally:
            os._exit(0)
    os.close(inner_write)
    data = os.read(inner_read, 32)
    os.close(inner_read)
    os.waitpid(inner, 0)
    number, _, stage = data.decode("ascii", "replace").partition(" ")
    if number == "0":
        return "0 "
    return f"{number if number.isdigit() else errno.EINVAL} {stage or 'proc'}"
