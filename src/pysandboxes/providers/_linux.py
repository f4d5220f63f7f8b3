"""Raw Linux system calls for the kernel providers: numbers per architecture, and one caller.

Python has no ``os.syscall``; the Landlock and seccomp providers need four calls the standard
library does not wrap (``landlock_*`` and ``seccomp``) plus ``prctl``. Importing :mod:`ctypes`
costs about 4 ms (it builds dozens of types and loads ``ctypes.pythonapi``); this module binds
libc's ``syscall(2)`` through the ``_ctypes`` extension that ``ctypes`` itself is built on, which
costs well under 1 ms, and runs in ``python-sb``'s own process just before it execs the
interpreter.

Only x86_64 and aarch64 are supported: the seccomp filter must check the architecture and use
that architecture's system call numbers, so a machine outside these tables gets a clear "not
supported" instead of a filter built for another ABI.
"""

from __future__ import annotations

import os
import sys

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

TYPE_CHECKING = False  # as typing.TYPE_CHECKING: typing costs start-up time (DESIGN 7)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, Final

#: ``AUDIT_ARCH_*`` value the kernel puts in ``seccomp_data.arch`` for the native ABI.
AUDIT_ARCH: Final[dict[str, int]] = {
    "x86_64": 0xC000003E,  # EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
    "aarch64": 0xC00000B7,  # EM_AARCH64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
}

#: System call numbers used by the providers. aarch64 uses the generic table
#: (``asm-generic/unistd.h``); numbers from 424 on are the same on every architecture.
_X86_64: Final[dict[str, int]] = {
    "ioctl": 16, "shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64, "semop": 65,
    "semctl": 66, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "capget": 125,
    "capset": 126, "semtimedop": 220, "socket": 41, "clone": 56, "ptrace": 101, "syslog": 103,
    "uselib": 134,
    "vhangup": 153, "modify_ldt": 154, "pivot_root": 155, "prctl": 157, "adjtimex": 159,
    "chroot": 161, "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166,
    "swapon": 167, "swapoff": 168, "reboot": 169, "sethostname": 170, "setdomainname": 171,
    "iopl": 172, "ioperm": 173, "init_module": 175, "delete_module": 176, "quotactl": 179,
    "nfsservctl": 180, "lookup_dcookie": 212, "clock_settime": 227, "kexec_load": 246,
    "add_key": 248, "request_key": 249, "keyctl": 250, "migrate_pages": 256, "unshare": 272,
    "move_pages": 279, "perf_event_open": 298, "fanotify_init": 300, "name_to_handle_at": 303,
    "open_by_handle_at": 304, "clock_adjtime": 305, "setns": 308, "process_vm_readv": 310,
    "process_vm_writev": 311, "kcmp": 312, "finit_module": 313, "seccomp": 317,
    "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323,
    "open": 2, "chmod": 90, "fchmod": 91, "creat": 85, "mknod": 133, "openat": 257,
    "mknodat": 259, "fchmodat": 268, "sendto": 44, "sendmsg": 46, "sendmmsg": 307,
    "listen": 50, "prlimit64": 302, "setpriority": 141, "sched_setparam": 142,
    "sched_setscheduler": 144, "sched_setaffinity": 203, "ioprio_set": 251,
    "sched_setattr": 314, "get_robust_list": 274,
}  # fmt: skip
_AARCH64: Final[dict[str, int]] = {
    "lookup_dcookie": 18, "ioctl": 29, "umount2": 39, "mount": 40, "pivot_root": 41,
    "nfsservctl": 42, "chroot": 51, "vhangup": 58, "quotactl": 60, "acct": 89, "unshare": 97,
    "kexec_load": 104, "init_module": 105, "delete_module": 106, "clock_settime": 112,
    "syslog": 116, "ptrace": 117, "reboot": 142, "sethostname": 161, "setdomainname": 162,
    "prctl": 167, "settimeofday": 170, "adjtimex": 171, "socket": 198, "add_key": 217,
    "request_key": 218, "keyctl": 219, "clone": 220, "swapon": 224, "swapoff": 225,
    "migrate_pages": 238, "move_pages": 239, "perf_event_open": 241, "fanotify_init": 262,
    "name_to_handle_at": 264, "open_by_handle_at": 265, "clock_adjtime": 266, "setns": 268,
    "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272, "finit_module": 273,
    "seccomp": 277, "bpf": 280, "userfaultfd": 282, "kexec_file_load": 294, "capget": 90,
    "capset": 91, "msgget": 186, "msgctl": 187, "msgrcv": 188, "msgsnd": 189, "semget": 190,
    "semctl": 191, "semtimedop": 192, "semop": 193, "shmget": 194, "shmctl": 195, "shmat": 196,
    "fchmod": 52, "fchmodat": 53, "openat": 56, "mknodat": 33, "sendto": 206, "sendmsg": 211,
    "sendmmsg": 269, "listen": 201, "prlimit64": 261, "setpriority": 140, "sched_setparam": 118,
    "sched_setscheduler": 119, "sched_setaffinity": 122, "ioprio_set": 30, "sched_setattr": 274,
    "get_robust_list": 100,
}  # fmt: skip
_COMMON: Final[dict[str, int]] = {
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428,
    "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
    "quotactl_fd": 443, "landlock_create_ruleset": 444, "landlock_add_rule": 445,
    "landlock_restrict_self": 446, "open_tree_attr": 467, "pidfd_open": 434,
    "close_range": 436, "openat2": 437, "fchmodat2": 452,
}  # fmt: skip

SYSCALLS: Final[dict[str, dict[str, int]]] = {
    "x86_64": {**_X86_64, **_COMMON},
    "aarch64": {**_AARCH64, **_COMMON},
}

PR_CAPBSET_DROP: Final = 24
PR_SET_NO_NEW_PRIVS: Final = 38
PR_GET_NO_NEW_PRIVS: Final = 39
PR_CAP_AMBIENT: Final = 47
PR_CAP_AMBIENT_CLEAR_ALL: Final = 4
CAP_SETPCAP: Final = 8
_CAPABILITY_VERSION_3: Final = 0x20080522


def machine() -> str:
    """The running kernel's architecture name (``os.uname().machine``)."""

    return os.uname().machine


def supported(arch: str | None = None) -> bool:
    """Whether the providers know this architecture's system call numbers (for the running
    process: also a 64-bit interpreter, since a 32-bit one on a 64-bit kernel uses another ABI)."""

    if arch is None and sys.maxsize < 2**32:
        return False
    return (arch or machine()) in SYSCALLS


def nr(name: str, arch: str | None = None) -> int:
    """The number of system call ``name`` on ``arch`` (the running one by default)."""

    return SYSCALLS[arch or machine()][name]


# -- the caller ------------------------------------------------------------------------------------

_syscall: Any = None
_Long: Any = None
_get_errno: Any = None
_numbers: dict[str, int] = {}


def _bind() -> None:
    """Bind libc's ``syscall`` once, as ``long syscall(long, ...)`` with errno capture."""

    global _syscall, _Long, _get_errno, _numbers
    import _ctypes

    class Long(_ctypes._SimpleCData):  # type: ignore[misc,name-defined,type-arg]
        _type_ = "l"

    class Function(_ctypes.CFuncPtr):  # type: ignore[misc,name-defined,type-arg]
        _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
        _restype_ = Long

    class Libc:
        _handle = _ctypes.dlopen(None, os.RTLD_NOW)  # type: ignore[arg-type]

    _numbers = SYSCALLS.get(machine(), {})
    _syscall = Function(("syscall", Libc))  # type: ignore[arg-type]
    _Long = Long
    _get_errno = _ctypes.get_errno


def syscall(name: str, *args: int | bytes | None) -> int:
    """Call system call ``name`` with integer, pointer-to-bytes or NULL arguments.

    Returns the (non-negative) result; raises ``OSError`` with the kernel's errno on failure.
    ``bytes`` arguments are passed as pointers to their (read-only) buffer: enough for the input
    structures of Landlock and seccomp.
    """

    if _syscall is None:
        _bind()
    number = _numbers.get(name)
    if number is None:
        raise OSError(38, f"{name}: unknown system call on {machine()}")  # ENOSYS
    long = _Long
    result: int = _syscall(
        long(number), *[a if a is None or a.__class__ is bytes else long(a) for a in args]
    )
    if result == -1:
        err: int = _get_errno()
        raise OSError(err, f"{name}: {os.strerror(err)}")
    return result


def syscall_each(name: str, before: tuple[int, ...], payloads: Iterable[bytes], after: int) -> None:
    """Call ``name(*before, payload, after)`` for each payload, as :func:`syscall` would, with
    the arguments converted once: Landlock's port rules come one port a call, and the
    ephemeral range alone is some 28,000 of them."""

    if _syscall is None:
        _bind()
    number = _numbers.get(name)
    if number is None:
        raise OSError(38, f"{name}: unknown system call on {machine()}")  # ENOSYS
    long = _Long
    call = _syscall
    code = long(number)
    fixed = [long(a) for a in before]
    last = long(after)
    for payload in payloads:
        if call(code, *fixed, payload, last) == -1:
            err: int = _get_errno()
            raise OSError(err, f"{name}: {os.strerror(err)}")


def pinned_buffer(data: bytes) -> tuple[object, int]:
    """A C copy of ``data`` and its address (keep the first item alive while the address is used).

    For structures that hold a pointer to another buffer (``struct sock_fprog``).
    """

    import _ctypes

    class Char(_ctypes._SimpleCData):  # type: ignore[misc,name-defined,type-arg]
        _type_ = "c"

    array_type: Any = type("Buffer", (_ctypes.Array,), {"_type_": Char, "_length_": len(data)})
    buffer = array_type.from_buffer_copy(data)
    return buffer, int(_ctypes.addressof(buffer))


def set_no_new_privs() -> None:
    """``prctl(PR_SET_NO_NEW_PRIVS, 1)``: exec can no longer gain privileges (setuid, file caps)."""

    syscall("prctl", PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def no_new_privs() -> bool:
    """Whether ``no_new_privs`` is set on the calling thread."""

    return syscall("prctl", PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1


def capabilities() -> dict[str, int]:
    """The calling thread's capability sets from /proc (``CapEff``, ``CapPrm``, ``CapBnd``...)."""

    found: dict[str, int] = {}
    with open("/proc/thread-self/status", "rb") as status:
        for line in status:
            if line.startswith(b"Cap"):
                name, _, value = line.partition(b":")
                found[name.decode()] = int(value, 16)
    return found


def drop_capabilities(keep: int) -> None:
    """Keep only the capabilities in the ``keep`` mask: bounding, ambient, permitted, effective
    and inheritable sets. Nothing to do (and nothing done) for a process that holds none."""

    caps = capabilities()
    if caps.get("CapEff", 0) & (1 << CAP_SETPCAP):
        bounding = caps.get("CapBnd", 0)
        for cap in range(64):
            if bounding & (1 << cap) and not keep & (1 << cap):
                syscall("prctl", PR_CAPBSET_DROP, cap, 0, 0, 0)
    if caps.get("CapAmb", 0):
        syscall("prctl", PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    held = caps.get("CapPrm", 0) | caps.get("CapEff", 0) | caps.get("CapInh", 0)
    if held & ~keep:
        permitted = caps.get("CapPrm", 0) & keep
        effective = caps.get("CapEff", 0) & keep
        # struct __user_cap_data_struct[2]: {effective, permitted, inheritable} for bits 0-31,
        # then for bits 32-63.
        data = b"".join(
            (effective >> shift & 0xFFFFFFFF).to_bytes(4, sys.byteorder)
            + (permitted >> shift & 0xFFFFFFFF).to_bytes(4, sys.byteorder)
            + bytes(4)
            for shift in (0, 32)
        )
        header = _CAPABILITY_VERSION_3.to_bytes(4, sys.byteorder) + bytes(4)  # pid 0: ourselves
        syscall("capset", header, data)
