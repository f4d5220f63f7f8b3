"""The seccomp filter shared by the kernel providers: system calls no sandboxed program needs.

Built here, with the standard library only, as a classic BPF program (``struct sock_filter[]``).
``landlock`` loads it in ``python-sb``'s own process before exec (:func:`install`); ``bwrap`` reads
it from a file descriptor (:func:`filter_fd`, for ``bwrap --seccomp FD``).

What the filter does, in order (``docs/seccomp.md`` gives the reasons):

1. A system call made with another ABI than the native one (i386 ``int 0x80`` on x86_64, the x32
   ABI, arm32 on aarch64) kills the process: the numbers below would mean other calls there.
2. Each call of :data:`DENIED` fails with ``EPERM``: tracing and reading other processes' memory,
   kernel keyrings, BPF, perf events, module loading, mounts and namespaces, io_uring (which
   would bypass the filter), userfaultfd, kexec, reboot, swap, accounting, quotas, file handles,
   clock and host-name changes, System V IPC (shared with the host, not covered by Landlock).
3. ``clone`` with a namespace flag fails with ``EPERM``; ``clone3`` (whose flags sit in memory, out
   of the filter's sight) fails with ``ENOSYS``, so that the C library falls back to ``clone``.
4. ``ioctl(TIOCSTI)`` and ``ioctl(TIOCLINUX)`` fail with ``EPERM`` (typing into the terminal the
   program inherited would run commands in the user's shell after it exits).
5. ``socket()``: TCP sockets (``AF_INET``/``AF_INET6``, ``SOCK_STREAM``, protocol 0 or TCP) are
   allowed (Landlock filters them by port); UDP only when ``allow_udp``; ``AF_UNIX`` only when
   ``allow_unix`` (Landlock up to ABI 7 cannot restrict connecting to a Unix socket by path);
   other IP sockets (raw, ICMP, SCTP, MPTCP, which Landlock's TCP rules do not see) fail with
   ``EACCES``; other address families with ``EAFNOSUPPORT``. ``socketpair`` stays allowed.
6. The set-user-ID and set-group-ID bits in the mode of the ``chmod`` family, of ``open``,
   ``openat`` and ``creat`` creating a file, and of ``mknod``: ``EPERM`` (a file left with them
   in a writable exposure is a privilege escalation on the host). ``openat2`` (its mode is in
   memory): ``ENOSYS``.
7. With ``fastopen=False`` (Landlock judging connect): sends with ``MSG_FASTOPEN``:
   ``EOPNOTSUPP`` (they connect without ``connect()``).
8. With ``foreign_processes=True`` (no PID namespace): changing another process's resource
   limits, scheduling, affinity or priority: ``EPERM``.
"""

from __future__ import annotations

import errno
import os
import sys

from pysandboxes.providers import _linux

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

TYPE_CHECKING = False  # as typing.TYPE_CHECKING: typing costs start-up time (DESIGN 7)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Final

#: Denied system calls (``EPERM``) and why no sandboxed Python program needs them.
DENIED: Final[tuple[tuple[str, str], ...]] = (
    ("ptrace", "tracing other processes reads and changes their memory"),
    ("process_vm_readv", "reads another process's memory"),
    ("process_vm_writev", "writes another process's memory"),
    ("pidfd_getfd", "steals a file descriptor from another process"),
    ("process_madvise", "acts on another process's memory"),
    ("kcmp", "compares kernel objects of other processes (an information leak)"),
    ("add_key", "kernel keyrings hold credentials shared with the user's session"),
    ("request_key", "kernel keyrings"),
    ("keyctl", "kernel keyrings"),
    ("bpf", "loads programs into the kernel: large attack surface"),
    ("perf_event_open", "performance counters: side channels and kernel attack surface"),
    ("userfaultfd", "a classic tool for kernel exploits (race widening)"),
    ("io_uring_setup", "io_uring runs operations that the seccomp filter never sees"),
    ("io_uring_enter", "io_uring"),
    ("io_uring_register", "io_uring"),
    ("init_module", "loads kernel modules"),
    ("finit_module", "loads kernel modules"),
    ("delete_module", "unloads kernel modules"),
    ("kexec_load", "replaces the running kernel"),
    ("kexec_file_load", "replaces the running kernel"),
    ("reboot", "reboots the machine"),
    ("mount", "changes the mount table"),
    ("umount2", "changes the mount table"),
    ("pivot_root", "changes the root file system"),
    ("chroot", "changes the root directory"),
    ("move_mount", "new mount API"),
    ("open_tree", "new mount API"),
    ("open_tree_attr", "new mount API"),
    ("fsopen", "new mount API"),
    ("fsmount", "new mount API"),
    ("fsconfig", "new mount API"),
    ("fspick", "new mount API"),
    ("mount_setattr", "new mount API"),
    ("unshare", "new namespaces expose kernel code meant for privileged users"),
    ("setns", "joins another namespace"),
    ("swapon", "system administration"),
    ("swapoff", "system administration"),
    ("acct", "system administration (process accounting)"),
    ("quotactl", "system administration (disk quotas)"),
    ("quotactl_fd", "system administration (disk quotas)"),
    ("name_to_handle_at", "file handles open files by inode, around path-based rules"),
    ("open_by_handle_at", "file handles open files by inode, around path-based rules"),
    ("lookup_dcookie", "kernel profiling interface"),
    ("fanotify_init", "watches file accesses of the whole system"),
    ("syslog", "reads the kernel log"),
    ("vhangup", "hangs up the terminal"),
    ("settimeofday", "changes the system clock"),
    ("clock_settime", "changes the system clock"),
    ("clock_adjtime", "changes the system clock"),
    ("adjtimex", "changes the system clock"),
    ("sethostname", "changes the host name"),
    ("setdomainname", "changes the domain name"),
    ("migrate_pages", "moves another process's memory"),
    ("move_pages", "moves another process's memory"),
    ("shmget", "System V IPC objects are shared with the host (no IPC namespace here)"),
    ("shmat", "System V IPC"),
    ("shmctl", "System V IPC"),
    ("semget", "System V IPC"),
    ("semop", "System V IPC"),
    ("semtimedop", "System V IPC"),
    ("semctl", "System V IPC"),
    ("msgget", "System V IPC"),
    ("msgsnd", "System V IPC"),
    ("msgrcv", "System V IPC"),
    ("msgctl", "System V IPC"),
    ("iopl", "x86 I/O port access"),
    ("ioperm", "x86 I/O port access"),
    ("modify_ldt", "x86 segment tables: kernel attack surface"),
    ("uselib", "obsolete loader call"),
    ("nfsservctl", "obsolete NFS server call"),
)

# Classic BPF opcodes (linux/filter.h).
_LD_W_ABS: Final = 0x20
_ALU_AND_K: Final = 0x54
_JEQ_K: Final = 0x15
_JGE_K: Final = 0x35
_JSET_K: Final = 0x45
_RET_K: Final = 0x06

_RET_KILL_PROCESS: Final = 0x80000000
_RET_USER_NOTIF: Final = 0x7FC00000
_RET_ERRNO: Final = 0x00050000
_RET_ALLOW: Final = 0x7FFF0000

# struct seccomp_data offsets.
_OFF_NR: Final = 0
_OFF_ARCH: Final = 4


def _arg_low(index: int) -> int:
    """Offset of the low 32 bits of argument ``index`` (little-endian: the first word)."""

    return 16 + 8 * index


_X32_SYSCALL_BIT: Final = 0x40000000
_CLONE_NAMESPACES: Final = 0x7E020000  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
_TIOCSTI: Final = 0x5412
_TIOCLINUX: Final = 0x541C
_AF_UNIX, _AF_INET, _AF_INET6 = 1, 2, 10
_SOCK_STREAM, _SOCK_DGRAM, _SOCK_TYPE_MASK = 1, 2, 0xF
_IPPROTO_TCP, _IPPROTO_UDP = 6, 17

# A tiny assembler: each item is ("stmt", code, k), ("jump", code, k, true_label, false_label)
# with None meaning "the next instruction", or ("label", name).
_Item = tuple[object, ...]


def _assemble(items: Sequence[_Item]) -> bytes:
    """Resolve labels and encode ``struct sock_filter`` entries (little-endian: both supported
    architectures are)."""

    labels: dict[object, int] = {}
    position = 0
    for item in items:
        if item[0] == "label":
            labels[item[1]] = position
        else:
            position += 1
    words: list[bytes] = []
    for item in items:
        kind = item[0]
        if kind == "label":
            continue
        code: int = item[1]  # type: ignore[assignment]
        k: int = item[2]  # type: ignore[assignment]
        word = code | k << 32
        if kind == "jump":
            here = len(words)
            word |= _offset(labels, item[3], here) << 16 | _offset(labels, item[4], here) << 24
        words.append(word.to_bytes(8, "little"))
    return b"".join(words)


def _offset(labels: dict[object, int], target: object, position: int) -> int:
    if target is None:
        return 0
    distance = labels[target] - position - 1
    if not 0 <= distance <= 255:
        raise ValueError(f"BPF jump to {target} out of range ({distance})")
    return distance


def _ret(action: int) -> _Item:
    return ("stmt", _RET_K, action)


#: Calls whose mode argument can carry the set-user-ID and set-group-ID bits: name -> (the mode
#: argument, the flags argument when the mode counts only for a call that creates a file).
MODE_CALLS: Final[dict[str, tuple[int, int | None]]] = {
    "chmod": (1, None),
    "fchmod": (1, None),
    "fchmodat": (2, None),
    "fchmodat2": (2, None),
    "creat": (1, None),
    "open": (2, 1),
    "openat": (3, 2),
    "mknod": (1, None),
    "mknodat": (2, None),
}
#: Sends whose flags can hold ``MSG_FASTOPEN``: name -> the flags argument.
SEND_CALLS: Final[dict[str, int]] = {"sendto": 3, "sendmsg": 2, "sendmmsg": 3}
#: Calls that change (or, ``get_robust_list``, read the memory layout of) another process
#: named by their first argument (0: the caller itself).
PROCESS_CALLS: Final[tuple[str, ...]] = (
    "sched_setaffinity",
    "sched_setscheduler",
    "sched_setparam",
    "sched_setattr",
    "get_robust_list",
)
#: Calls whose first argument says whose priority changes, and the value meaning "one process"
#: (``PRIO_PROCESS``, ``IOPRIO_WHO_PROCESS``): a group or a user's every process is refused.
PRIORITY_CALLS: Final[dict[str, int]] = {"setpriority": 0, "ioprio_set": 1}

_SETUID_BITS: Final = 0o6000  # S_ISUID | S_ISGID
_CREATES: Final = 0o100 | 0o20000000  # O_CREAT | __O_TMPFILE (x86_64 and the generic ABI)
_MSG_FASTOPEN: Final = 0x20000000


def _arg_high(index: int) -> int:
    """Offset of the high 32 bits of argument ``index`` (a pointer: both words are compared)."""

    return 20 + 8 * index


def _mode_block(name: str, nr: int, mode: int, flags: int | None) -> list[_Item]:
    """``name`` with the set-user-ID or set-group-ID bit in its mode (for a call that creates
    a file when ``flags`` is given): ``EPERM``, the kernel's answer to a caller that may not
    set them."""

    allow, after = f"{name}_allow", f"{name}_after"
    items: list[_Item] = [("jump", _JEQ_K, nr, None, after)]
    if flags is not None:
        items += [("stmt", _LD_W_ABS, _arg_low(flags)), ("jump", _JSET_K, _CREATES, None, allow)]
    items += [
        ("stmt", _LD_W_ABS, _arg_low(mode)),
        ("jump", _JSET_K, _SETUID_BITS, None, allow),
        _ret(_errno("EPERM")),
        ("label", allow),
        _ret(_RET_ALLOW),
        ("label", after),
    ]
    return items


def _send_block(name: str, nr: int, flags: int) -> list[_Item]:
    """``name`` with ``MSG_FASTOPEN``: ``EOPNOTSUPP``, what the kernel answers when Fast Open is
    off (a client then connects with ``connect()``, which Landlock judges)."""

    allow, after = f"{name}_allow", f"{name}_after"
    return [
        ("jump", _JEQ_K, nr, None, after),
        ("stmt", _LD_W_ABS, _arg_low(flags)),
        ("jump", _JSET_K, _MSG_FASTOPEN, None, allow),
        _ret(_errno("EOPNOTSUPP")),
        ("label", allow),
        _ret(_RET_ALLOW),
        ("label", after),
    ]


def _own_process_block(name: str, nr: int) -> list[_Item]:
    """``name`` on another process than the caller (first argument not 0): ``EPERM``."""

    allow, after = f"{name}_allow", f"{name}_after"
    return [
        ("jump", _JEQ_K, nr, None, after),
        ("stmt", _LD_W_ABS, _arg_low(0)),
        ("jump", _JEQ_K, 0, allow, None),
        _ret(_errno("EPERM")),
        ("label", allow),
        _ret(_RET_ALLOW),
        ("label", after),
    ]


def _priority_block(name: str, nr: int, one_process: int) -> list[_Item]:
    """``name(which, who, ...)`` for anything but the caller itself: ``EPERM``."""

    allow, refuse, after = f"{name}_allow", f"{name}_refuse", f"{name}_after"
    return [
        ("jump", _JEQ_K, nr, None, after),
        ("stmt", _LD_W_ABS, _arg_low(0)),
        ("jump", _JEQ_K, one_process, None, refuse),
        ("stmt", _LD_W_ABS, _arg_low(1)),
        ("jump", _JEQ_K, 0, allow, None),
        ("label", refuse),
        _ret(_errno("EPERM")),
        ("label", allow),
        _ret(_RET_ALLOW),
        ("label", after),
    ]


def _prlimit_block(nr: int) -> list[_Item]:
    """``prlimit64(pid, resource, new, old)`` that sets (``new`` not NULL) the limits of another
    process (``pid`` not 0): ``EPERM``. Reading them stays allowed (as ``/proc/PID/limits``)."""

    return [
        ("jump", _JEQ_K, nr, None, "prlimit_after"),
        ("stmt", _LD_W_ABS, _arg_low(0)),
        ("jump", _JEQ_K, 0, "prlimit_allow", None),
        ("stmt", _LD_W_ABS, _arg_low(2)),
        ("jump", _JEQ_K, 0, None, "prlimit_refuse"),
        ("stmt", _LD_W_ABS, _arg_high(2)),
        ("jump", _JEQ_K, 0, "prlimit_allow", None),
        ("label", "prlimit_refuse"),
        _ret(_errno("EPERM")),
        ("label", "prlimit_allow"),
        _ret(_RET_ALLOW),
        ("label", "prlimit_after"),
    ]


def filter_program(
    *,
    allow_udp: bool = False,
    allow_unix: bool = False,
    fastopen: bool = True,
    foreign_processes: bool = False,
    listen: str = "allow",
    arch: str | None = None,
) -> bytes:
    """The filter as ``struct sock_filter`` bytes, for ``arch`` (the running one by default).

    ``fastopen=False`` refuses sends with ``MSG_FASTOPEN``, which connect inside the send
    where Landlock's connect rules never look (a provider whose TCP rules are Landlock's);
    ``foreign_processes=True`` refuses changing the scheduling, priorities and resource limits
    of other processes (a provider without its own PID namespace, where the host's processes
    are in reach). ``listen``: ``allow``; ``refuse`` (``EACCES``: nothing may listen, and
    Landlock cannot see the bind ``listen`` makes on a socket never bound); ``notify`` (the
    call goes to python-sb's :mod:`~pysandboxes.providers.listen_guard`; install the filter
    with a listener). Raises ``ValueError`` for an architecture whose numbers this module does
    not know, or another ``listen`` value.
    """

    if listen not in ("allow", "refuse", "notify"):
        raise ValueError(f"seccomp filter: listen={listen!r}")

    arch = arch or _linux.machine()
    if not _linux.supported(arch):
        raise ValueError(f"seccomp filter: unsupported architecture {arch!r}")
    calls = _linux.SYSCALLS[arch]

    # The kills come first, inline: a BPF jump reaches 255 instructions at most.
    items: list[_Item] = [
        ("stmt", _LD_W_ABS, _OFF_ARCH),
        ("jump", _JEQ_K, _linux.AUDIT_ARCH[arch], "native", None),
        _ret(_RET_KILL_PROCESS),
        ("label", "native"),
        ("stmt", _LD_W_ABS, _OFF_NR),
    ]
    if arch == "x86_64":
        items += [("jump", _JGE_K, _X32_SYSCALL_BIT, None, "numbered"), _ret(_RET_KILL_PROCESS)]
        items.append(("label", "numbered"))
    for name, _reason in DENIED:
        if name in calls:
            items += [("jump", _JEQ_K, calls[name], None, "next_" + name), _ret(_errno("EPERM"))]
            items.append(("label", "next_" + name))
    # Argument checks: each block returns, or leaves the call number in the accumulator.
    for name, (mode, flags) in MODE_CALLS.items():
        if name in calls:
            items += _mode_block(name, calls[name], mode, flags)
    if not fastopen:
        for name, flags in SEND_CALLS.items():
            items += _send_block(name, calls[name], flags)
    if foreign_processes:
        for name in PROCESS_CALLS:
            items += _own_process_block(name, calls[name])
        for name, one_process in PRIORITY_CALLS.items():
            items += _priority_block(name, calls[name], one_process)
        items += _prlimit_block(calls["prlimit64"])
    if listen != "allow":
        answer = _RET_USER_NOTIF if listen == "notify" else _errno("EACCES")
        items += [
            ("jump", _JEQ_K, calls["listen"], None, "listen_after"),
            _ret(answer),
            ("label", "listen_after"),
        ]
    items += [
        ("jump", _JEQ_K, calls["clone3"], "enosys", None),
        ("jump", _JEQ_K, calls["openat2"], "enosys", None),
        ("jump", _JEQ_K, calls["socket"], "socket", None),
        ("jump", _JEQ_K, calls["ioctl"], "ioctl", None),
        ("jump", _JEQ_K, calls["clone"], "clone", None),
        _ret(_RET_ALLOW),
        # socket(domain, type, protocol)
        ("label", "socket"),
        ("stmt", _LD_W_ABS, _arg_low(0)),
        ("jump", _JEQ_K, _AF_UNIX, "unix", None),
        ("jump", _JEQ_K, _AF_INET, "inet", None),
        ("jump", _JEQ_K, _AF_INET6, "inet", "eafnosupport"),
        ("label", "unix"),
        _ret(_RET_ALLOW if allow_unix else _errno("EACCES")),
        ("label", "inet"),
        ("stmt", _LD_W_ABS, _arg_low(1)),
        ("stmt", _ALU_AND_K, _SOCK_TYPE_MASK),
        ("jump", _JEQ_K, _SOCK_STREAM, "stream", None),
        ("jump", _JEQ_K, _SOCK_DGRAM, "dgram", "eacces"),
        ("label", "stream"),
        ("stmt", _LD_W_ABS, _arg_low(2)),
        ("jump", _JEQ_K, 0, "allow", None),
        ("jump", _JEQ_K, _IPPROTO_TCP, "allow", "eacces"),
        ("label", "dgram"),
    ]
    if allow_udp:
        items += [
            ("stmt", _LD_W_ABS, _arg_low(2)),
            ("jump", _JEQ_K, 0, "allow", None),
            ("jump", _JEQ_K, _IPPROTO_UDP, "allow", "eacces"),
        ]
    else:
        items.append(_ret(_errno("EACCES")))
    items += [
        # ioctl(fd, cmd, ...)
        ("label", "ioctl"),
        ("stmt", _LD_W_ABS, _arg_low(1)),
        ("jump", _JEQ_K, _TIOCSTI, "eperm", None),
        ("jump", _JEQ_K, _TIOCLINUX, "eperm", "allow"),
        # clone(flags, ...)
        ("label", "clone"),
        ("stmt", _LD_W_ABS, _arg_low(0)),
        ("jump", _JSET_K, _CLONE_NAMESPACES, "eperm", "allow"),
        ("label", "allow"),
        _ret(_RET_ALLOW),
        ("label", "eperm"),
        _ret(_errno("EPERM")),
        ("label", "eacces"),
        _ret(_errno("EACCES")),
        ("label", "eafnosupport"),
        _ret(_errno("EAFNOSUPPORT")),
        ("label", "enosys"),
        _ret(_errno("ENOSYS")),
    ]
    return _assemble(items)


def _errno(name: str) -> int:
    code: int = getattr(errno, name)
    return _RET_ERRNO | code


_SECCOMP_SET_MODE_FILTER: Final = 1


_FILTER_FLAG_NEW_LISTENER: Final = 1 << 3


def install(program: bytes | None = None, *, listener: bool = False) -> int:
    """Load ``program`` (default: :func:`filter_program`) into the calling thread, for good.

    Sets ``no_new_privs`` first (the kernel requires it of an unprivileged caller, and the filter
    must survive exec). With ``listener`` (a program with ``SECCOMP_RET_USER_NOTIF``), returns
    the listener descriptor (close-on-exec), else -1. Raises ``OSError`` if the kernel refuses.
    """

    if program is None:
        program = filter_program()
    if not program or len(program) % 8:
        raise ValueError("a seccomp program is a non-empty array of 8-byte instructions")
    _linux.set_no_new_privs()
    keep, address = _linux.pinned_buffer(program)
    # struct sock_fprog { unsigned short len; struct sock_filter *filter; } (pointer aligned).
    fprog = (len(program) // 8).to_bytes(2, sys.byteorder) + bytes(6)
    fprog += address.to_bytes(8, sys.byteorder)
    flags = _FILTER_FLAG_NEW_LISTENER if listener else 0
    fd = _linux.syscall("seccomp", _SECCOMP_SET_MODE_FILTER, flags, fprog)
    del keep
    return fd if listener else -1


def filter_fd(program: bytes | None = None) -> int:
    """A readable descriptor holding ``program`` from its start (for ``bwrap --seccomp FD``).

    A ``memfd``; the caller passes it to the child and closes it after the spawn. It
    is not close-on-exec: bwrap must inherit it.
    """

    if program is None:
        program = filter_program()
    fd = int(os.memfd_create("pysandboxes-seccomp", 0))
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
