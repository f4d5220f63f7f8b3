"""Other processes and the environment: secrets in env and /proc, signals, ptrace."""

from __future__ import annotations

import fcntl
import os
import pty
import termios
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import require
from tests.redteam.hostile.harness import (
    SECRET_VAR,
    Scene,
    assert_reached,
    assert_refused,
    expect_refusal,
    verdict_of,
)


@pytest.mark.kernel
def test_environment_secret_not_inherited(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    expect_refusal(request, kernel_provider, "env_secret")
    args = (SECRET_VAR, scene.secret_text)
    assert_reached(scene.control("env_secret.py", *args))
    verdict = scene.sandboxed(kernel_provider, "env_secret.py", *args)
    # Not an errno: the variable is simply absent from the environment the launcher built.
    assert_refused(verdict, [None], provider=kernel_provider)


@pytest.mark.kernel
def test_read_host_process_environ(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    expect_refusal(request, kernel_provider, "proc_environ")
    args = (str(scene.host_pid), scene.secret_text)
    assert_reached(scene.control("proc_environ.py", *args))
    verdict = scene.sandboxed(kernel_provider, "proc_environ.py", *args)
    # ENOENT: a provider with its own PID namespace and /proc does not see the host process.
    assert_refused(verdict, ["EACCES", "EPERM", "ENOENT"], provider=kernel_provider)


@pytest.mark.kernel
def test_signal_host_process(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    expect_refusal(request, kernel_provider, "signal_host")
    verdict = scene.sandboxed(kernel_provider, "signal_host.py", str(scene.host_pid))
    # ESRCH: own PID namespace, where the host's PID names nobody (or no process of ours).
    assert_refused(verdict, ["EPERM", "ESRCH"], provider=kernel_provider)
    assert _alive(scene.host_pid), "the host process was killed from inside the sandbox"
    assert_reached(scene.control("signal_host.py", str(scene.host_pid)))


@pytest.mark.kernel
def test_ptrace_host_process(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    expect_refusal(request, kernel_provider, "ptrace_host")
    verdict = scene.sandboxed(kernel_provider, "ptrace_host.py", str(scene.host_pid))
    assert_refused(verdict, ["EPERM", "ESRCH", "EACCES"], provider=kernel_provider)
    assert_reached(scene.control("ptrace_host.py", str(scene.host_pid)))


@pytest.mark.kernel
def test_read_host_sysv_shared_memory(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    expect_refusal(request, kernel_provider, "sysv_shm")
    args = (str(scene.shm.key), scene.secret_text)
    assert_reached(scene.control("sysv_shm.py", *args))
    verdict = scene.sandboxed(kernel_provider, "sysv_shm.py", *args)
    # ENOENT: a provider with its own IPC namespace, where the host's key does not exist.
    assert_refused(verdict, ["EPERM", "EACCES", "ENOENT"], provider=kernel_provider)


@pytest.mark.kernel
def test_inject_into_controlling_terminal(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    expect_refusal(request, kernel_provider, "tty_inject")
    legacy = Path("/proc/sys/dev/tty/legacy_tiocsti")
    require(
        not legacy.exists() or legacy.read_text().strip() != "0",
        "this kernel refuses TIOCSTI to everyone (dev.tty.legacy_tiocsti=0): nothing to attack",
    )
    verdict, typed = _with_terminal(scene, kernel_provider)
    assert typed == b"", f"{kernel_provider}: characters reached the terminal input: {typed!r}"
    assert_refused(verdict, ["EPERM", "EIO", "ENOTTY"], provider=kernel_provider)
    control, typed = _with_terminal(scene, None)
    assert_reached(control)
    assert b"echo pwned" in typed


@pytest.mark.kernel
@pytest.mark.parametrize("network", [False, True], ids=["no-net", "net"])
def test_no_capability_left_to_the_program(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene, network: bool
) -> None:
    """Issue 23: under bwrap run as root the program kept every capability of its user
    namespace (and bwrap runs as the network holder's root whenever net= rules exist)."""

    require(os.geteuid() == 0, "capabilities are held by a root caller only")
    expect_refusal(request, kernel_provider, "capabilities")
    kept = 0
    if kernel_provider == "landlock":
        from pysandboxes.providers.landlock import KEPT_CAPABILITIES

        kept = KEPT_CAPABILITIES  # file access and low ports, bounded by the Landlock rules
    if not network:  # the scene's rules hold net= rules: drop them
        text = scene.rules_file.read_text()
        scene.rules_file.write_text(
            "\n".join(line for line in text.splitlines() if not line.startswith("net=")) + "\n"
        )
    verdict = scene.sandboxed(kernel_provider, "capabilities.py", f"{kept:x}")
    assert_refused(verdict, [None], provider=kernel_provider)
    assert_reached(scene.control("capabilities.py", f"{kept:x}"))


def _host_view(pid: int, how: str) -> object:
    """What the host sees of the setting ``process_setter.py HOW`` changes."""

    import resource

    if how == "prlimit":
        return resource.prlimit(pid, resource.RLIMIT_NOFILE)[0]
    if how == "setpriority":
        return os.getpriority(os.PRIO_PROCESS, pid)
    if how == "affinity":
        return os.sched_getaffinity(pid)
    if how == "scheduler":
        return os.sched_getscheduler(pid)
    return None  # ioprio: no standard-library reader; the attack's own read-back decides


@pytest.mark.kernel
@pytest.mark.parametrize("how", ["prlimit", "setpriority", "affinity", "scheduler", "ioprio"])
def test_change_host_process_settings(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene, how: str
) -> None:
    """Issue 23, class 3: resource limits (and the other per-process setters) of a host process
    of the same user, which no signal scope covers."""

    if how == "affinity":
        require(len(os.sched_getaffinity(0)) > 1, "one CPU: an affinity change cannot be seen")
    expect_refusal(request, kernel_provider, "process_" + how)
    before = _host_view(scene.host_pid, how)
    verdict = scene.sandboxed(kernel_provider, "process_setter.py", how, str(scene.host_pid))
    assert _host_view(scene.host_pid, how) == before, f"{kernel_provider}: {how} changed"
    # ESRCH: own PID namespace, where the host's PID names nobody.
    assert_refused(verdict, ["EPERM", "ESRCH", "EACCES"], provider=kernel_provider)
    assert_reached(scene.control("process_setter.py", how, str(scene.host_pid)))


def _with_terminal(scene: Scene, provider: str | None) -> tuple[dict[str, Any], bytes]:
    """Run tty_inject.py with a fresh pseudo-terminal as stdin and controlling terminal; what
    it printed, and what arrived in the terminal's input queue."""

    master, slave = pty.openpty()
    try:
        proc = scene.spawn(
            provider,
            "tty_inject.py",
            stdin=slave,
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        out, err = proc.communicate(timeout=60)
        os.set_blocking(slave, False)
        try:
            typed = os.read(slave, 1000)
        except BlockingIOError:
            typed = b""
    finally:
        os.close(master)
        os.close(slave)
    return verdict_of(out, err, proc.returncode, "tty_inject"), typed


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][:1] not in ("Z", "X")
    except FileNotFoundError:
        return False
    finally:
        os.sched_yield()
