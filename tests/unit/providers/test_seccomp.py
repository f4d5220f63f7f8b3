"""The shared seccomp filter: its decisions (through a small BPF interpreter) and, on this kernel,
what a filtered process sees.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import textwrap

import pytest

from pysandboxes.providers import _linux, seccomp
from tests.helpers import PYTHON, require

ALLOW = "ALLOW"
KILL = "KILL"


def run_bpf(program: bytes, *, arch: int, nr: int, args: tuple[int, ...] = ()) -> str:
    """Interpret the classic BPF ``program`` on one ``seccomp_data``; the action as text."""

    full = (list(args) + [0] * 6)[:6]
    data = nr.to_bytes(4, "little") + arch.to_bytes(4, "little") + bytes(8)
    data += b"".join(a.to_bytes(8, "little") for a in full)
    insns = [program[i : i + 8] for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    while True:
        raw = insns[pc]
        code = int.from_bytes(raw[0:2], "little")
        jt, jf, k = raw[2], raw[3], int.from_bytes(raw[4:8], "little")
        pc += 1
        if code == 0x20:
            acc = int.from_bytes(data[k : k + 4], "little")
        elif code == 0x54:
            acc &= k
        elif code in (0x15, 0x35, 0x45):
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += jt if taken else jf
        elif code == 0x06:
            if k == 0x7FFF0000:
                return ALLOW
            if k == 0x80000000:
                return KILL
            if k == 0x7FC00000:
                return "NOTIFY"
            assert k & 0xFFFF0000 == 0x00050000, hex(k)
            return errno.errorcode[k & 0xFFFF]
        else:
            raise AssertionError(f"unexpected BPF opcode {code:#x}")


X86 = _linux.AUDIT_ARCH["x86_64"]
NR = _linux.SYSCALLS["x86_64"]


def decide(name: str, *args: int, **options: bool) -> str:
    program = seccomp.filter_program(arch="x86_64", **options)
    return run_bpf(program, arch=X86, nr=NR[name], args=args)


def test_every_denied_call_is_known_on_x86_64() -> None:
    assert {name for name, _ in seccomp.DENIED} <= set(NR)
    for name, reason in seccomp.DENIED:
        assert reason, name
        assert decide(name) == "EPERM", name


def test_ordinary_calls_allowed() -> None:
    program = seccomp.filter_program(arch="x86_64")
    for nr in (0, 1, 2, 3, 9, 39, 57, 59, 60, 231, 257, 444, 445, 446):  # read ... landlock
        assert run_bpf(program, arch=X86, nr=nr) == ALLOW, nr


def test_foreign_abis_are_killed() -> None:
    program = seccomp.filter_program(arch="x86_64")
    assert run_bpf(program, arch=0x40000003, nr=20) == KILL  # i386 via int 0x80
    assert run_bpf(program, arch=X86, nr=0x40000000 | 39) == KILL  # x32 getpid


def test_socket_families_and_types() -> None:
    af_inet, af_inet6, af_unix, af_netlink, af_packet = 2, 10, 1, 16, 17
    stream, dgram, raw, cloexec, nonblock = 1, 2, 3, 0o2000000, 0o4000
    assert decide("socket", af_inet, stream, 0) == ALLOW
    assert decide("socket", af_inet6, stream | cloexec | nonblock, 6) == ALLOW
    assert decide("socket", af_inet, stream, 262) == "EACCES"  # MPTCP: not seen by Landlock
    assert decide("socket", af_inet, stream, 132) == "EACCES"  # SCTP
    assert decide("socket", af_inet, 5, 132) == "EACCES"  # SOCK_SEQPACKET
    assert decide("socket", af_inet, dgram, 0) == "EACCES"
    assert decide("socket", af_inet, dgram, 0, allow_udp=True) == ALLOW
    assert decide("socket", af_inet6, dgram | cloexec, 17, allow_udp=True) == ALLOW
    assert decide("socket", af_inet, dgram, 1, allow_udp=True) == "EACCES"  # ICMP ping socket
    assert decide("socket", af_inet, raw, 255, allow_udp=True) == "EACCES"
    assert decide("socket", af_unix, stream, 0) == "EACCES"
    assert decide("socket", af_unix, stream, 0, allow_unix=True) == ALLOW
    assert decide("socket", af_netlink, raw, 0) == "EAFNOSUPPORT"
    assert decide("socket", af_packet, raw, 0) == "EAFNOSUPPORT"
    # Only the low 32 bits are what the kernel reads for an int argument.
    assert decide("socket", (1 << 32) | af_inet, stream, 0) == ALLOW
    assert decide("socket", (1 << 32) | af_netlink, raw, 0) == "EAFNOSUPPORT"


def test_clone_namespaces_clone3_and_terminal_injection() -> None:
    sigchld, clone_thread_flags = 17, 0x3D0F00
    assert decide("clone", sigchld) == ALLOW
    assert decide("clone", clone_thread_flags) == ALLOW
    for flag in (0x20000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000):
        assert decide("clone", sigchld | flag) == "EPERM", hex(flag)
    assert decide("clone3") == "ENOSYS"
    assert decide("ioctl", 1, 0x5412) == "EPERM"  # TIOCSTI
    assert decide("ioctl", 1, 0x541C) == "EPERM"  # TIOCLINUX
    assert decide("ioctl", 1, 0x5401) == ALLOW  # TCGETS
    assert decide("ioctl", 1, (1 << 32) | 0x5412) == "EPERM"


def test_fast_open_refused_where_landlock_judges_connect() -> None:
    """Issue 23, class 1: MSG_FASTOPEN connects inside the send, out of Landlock's sight."""

    fastopen, nosignal = 0x20000000, 0x4000
    for name, flags_at in seccomp.SEND_CALLS.items():
        args = [3, 0, 0, 0]
        args[flags_at] = fastopen | nosignal
        assert decide(name, *args) == ALLOW, name  # the default: a namespace's ruleset sees it
        assert decide(name, *args, fastopen=False) == errno.errorcode[errno.EOPNOTSUPP], name
        args[flags_at] = nosignal
        assert decide(name, *args, fastopen=False) == ALLOW, name


def test_other_processes_left_alone_without_a_pid_namespace() -> None:
    """Issue 23, class 3: under Landlock the host's processes are in reach."""

    host = {"foreign_processes": True}
    for name in seccomp.PROCESS_CALLS:
        assert decide(name, 0, **host) == ALLOW, name
        assert decide(name, 4242, **host) == "EPERM", name
        assert decide(name, 4242) == ALLOW, name  # a PID namespace holds it
    new_limits = 0x7FFF_0000_1000
    assert decide("prlimit64", 0, 7, new_limits, 0, **host) == ALLOW
    assert decide("prlimit64", 4242, 7, 0, 0x1000, **host) == ALLOW  # reading only
    assert decide("prlimit64", 4242, 7, new_limits, 0, **host) == "EPERM"
    assert decide("prlimit64", 4242, 7, 1 << 32, 0, **host) == "EPERM"  # high word counts
    prio_process, prio_pgrp, prio_user = 0, 1, 2
    assert decide("setpriority", prio_process, 0, 10, **host) == ALLOW
    assert decide("setpriority", prio_process, 4242, 10, **host) == "EPERM"
    assert decide("setpriority", prio_pgrp, 0, 10, **host) == "EPERM"  # the shell's pipeline
    assert decide("setpriority", prio_user, 0, 10, **host) == "EPERM"  # every process of ours
    who_process, who_user = 1, 3
    assert decide("ioprio_set", who_process, 0, 0x4000, **host) == ALLOW
    assert decide("ioprio_set", who_process, 4242, 0x4000, **host) == "EPERM"
    assert decide("ioprio_set", who_user, 0, 0x4000, **host) == "EPERM"


def test_set_id_bits_refused_in_every_mode_argument() -> None:
    """Issue 23, class 6: no file leaves the sandbox set-user-ID or set-group-ID."""

    o_creat, o_tmpfile, o_wronly = 0o100, 0o20200000, 0o1
    for name, (mode_at, flags_at) in seccomp.MODE_CALLS.items():
        if name not in NR:  # fchmodat2: in the common table, checked below
            continue
        for mode, answer in ((0o755, ALLOW), (0o1777, ALLOW), (0o4755, "EPERM"), (0o2755, "EPERM")):
            args = [3, 0, 0, 0, 0]
            args[mode_at] = mode | 0o100000  # S_IFREG: mknod's type bits
            if flags_at is not None:
                args[flags_at] = o_creat | o_wronly
            assert decide(name, *args) == answer, (name, oct(mode))
        if flags_at is not None:
            args = [3, 0, 0, 0, 0]
            args[mode_at] = 0o4755
            assert decide(name, *args) == ALLOW, name  # no file created: the mode is unused
            args[flags_at] = o_tmpfile | 0o2
            assert decide(name, *args) == "EPERM", name
    assert decide("fchmodat2", 2**64 - 100, 0, 0o6755, 0) == "EPERM"  # AT_FDCWD
    assert decide("openat2") == "ENOSYS"  # its mode is in memory: the C library falls back


def test_listen_allowed_refused_or_handed_to_python_sb() -> None:
    """Issue 23, class 2: listen() on a socket never bound binds where Landlock never looks."""

    assert decide("listen", 3, 128) == ALLOW
    assert decide("listen", 3, 128, listen="refuse") == "EACCES"
    program = seccomp.filter_program(arch="x86_64", listen="notify")
    assert run_bpf(program, arch=X86, nr=NR["listen"], args=(3, 128)) == "NOTIFY"
    with pytest.raises(ValueError, match="listen"):
        seccomp.filter_program(arch="x86_64", listen="maybe")


def test_aarch64_program_uses_its_own_numbers() -> None:
    program = seccomp.filter_program(arch="aarch64")
    arm = _linux.AUDIT_ARCH["aarch64"]
    arm_nr = _linux.SYSCALLS["aarch64"]
    assert run_bpf(program, arch=arm, nr=arm_nr["ptrace"]) == "EPERM"
    assert run_bpf(program, arch=arm, nr=NR["ptrace"]) == ALLOW  # 101 is nanosleep on aarch64
    assert run_bpf(program, arch=X86, nr=arm_nr["ptrace"]) == KILL
    assert run_bpf(program, arch=arm, nr=0x40000000) == ALLOW  # no x32 check there


def test_unknown_architecture_and_bad_programs_refused() -> None:
    with pytest.raises(ValueError, match="unsupported architecture"):
        seccomp.filter_program(arch="riscv64")
    with pytest.raises(ValueError, match="8-byte"):
        seccomp.install(b"123")


def test_filter_fd_holds_the_program() -> None:
    program = seccomp.filter_program()
    fd = seccomp.filter_fd(program)
    try:
        assert os.get_inheritable(fd)
        assert os.read(fd, len(program) + 100) == program
    finally:
        os.close(fd)


# -- on this kernel --------------------------------------------------------------------------------

#: Calls with arguments that fail harmlessly (or do nothing) when not filtered.
HARMLESS = {
    "ptrace": (3, 1, 0, 0),  # PTRACE_PEEKUSER on a process we do not trace
    "keyctl": (9999,),
    "bpf": (9999, 0, 0),
    "perf_event_open": (0, 0, -1, -1, 0),
    "userfaultfd": (0xFFFF,),
    "io_uring_setup": (0, 0),
    "unshare": (0,),
    "setns": (-1, 0),
    "mount": (0, 0, 0, 0, 0),
    "umount2": (0, 0),
    "finit_module": (-1, 0, 0),
    "delete_module": (0, 0),
    "chroot": (0,),
    "fsopen": (0, 0),
    "open_tree": (-1, 0, 0),
    "syslog": (10, 0, 0),  # SYSLOG_ACTION_SIZE_BUFFER
    "pidfd_getfd": (-1, -1, 0),
    "kcmp": (0, 0, 0, 0, 0),
    "shmget": (0x70736200, 4096, 0),  # a key nobody created, no IPC_CREAT
    "msgget": (0x70736201, 0),
    "semget": (0x70736202, 1, 0),
}

PROBE = textwrap.dedent(
    """
    import json, os, sys
    from pysandboxes.providers import _linux, seccomp
    calls = json.loads(sys.argv[1])
    if sys.argv[2] == "filtered":
        seccomp.install()
    out = {}
    for name, args in calls.items():
        try:
            out[name] = _linux.syscall(name, *args)
        except OSError as exc:
            out[name] = exc.errno
    print(json.dumps(out))
    """
)


def _probe(mode: str, calls: dict[str, tuple[int, ...]]) -> dict[str, int]:
    proc = subprocess.run(
        [PYTHON, "-c", PROBE, json.dumps(calls), mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, int] = json.loads(proc.stdout)
    return result


@pytest.mark.kernel
def test_denied_calls_fail_with_eperm_on_this_kernel() -> None:
    require(_linux.supported(), f"architecture {_linux.machine()} not supported")
    calls = {**HARMLESS, "clone3": (0, 0), "ioctl": (-1, 0x5412, 0)}
    control = _probe("plain", calls)
    filtered = _probe("filtered", calls)
    for name in HARMLESS:
        assert filtered[name] == errno.EPERM, (name, filtered[name])
    assert filtered["clone3"] == errno.ENOSYS and control["clone3"] != errno.ENOSYS
    assert filtered["ioctl"] == errno.EPERM and control["ioctl"] == errno.EBADF
    # The control proves the EPERM came from the filter: these calls answer otherwise without
    # it, privileged or not (as root, nearly all the others do too).
    for name in ("ptrace", "keyctl", "unshare", "setns", "pidfd_getfd", "shmget", "msgget"):
        assert control[name] != errno.EPERM, (name, control[name])
    if os.geteuid() == 0:
        differing = [name for name in HARMLESS if control[name] != errno.EPERM]
        assert len(differing) >= len(HARMLESS) - 2, control


@pytest.mark.kernel
def test_x32_call_kills_the_process() -> None:
    require(_linux.machine() == "x86_64", "x32 exists on x86_64 only")
    code = (
        "from pysandboxes.providers import _linux, seccomp\n"
        "seccomp.install()\n"
        "_linux.SYSCALLS['x86_64']['x32_getpid'] = 0x40000000 | 39\n"
        "_linux.syscall('x32_getpid')\n"
    )
    proc = subprocess.run([PYTHON, "-c", code], capture_output=True, timeout=60, check=False)
    assert proc.returncode == -signal.SIGSYS, proc


@pytest.mark.kernel
def test_filtered_process_runs_python_normally() -> None:
    code = (
        "from pysandboxes.providers import seccomp\nseccomp.install()\n"
        "import subprocess, sys, socket, threading, json, ssl\n"
        "subprocess.run([sys.executable, '-c', 'print(1)'], check=True)\n"
        "socket.socketpair(); socket.socket()\n"
        "t = threading.Thread(target=print); t.start(); t.join()\n"
    )
    proc = subprocess.run(
        [PYTHON, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
