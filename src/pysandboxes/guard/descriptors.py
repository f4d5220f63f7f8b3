"""File-descriptor control calls (``fcntl.fcntl``, ``fcntl.ioctl``, ``fcntl.flock``): judged.

CPython raises an audit event for each (``fcntl.fcntl``, ``fcntl.ioctl``, ``fcntl.flock``,
with the descriptor already converted to an ``int``), but what they do depends on the command,
and some reach beyond the descriptor:

- **Signals to other processes** (``process-control``): ``F_SETOWN``/``F_SETOWN_EX`` to
  another process or a process group (with ``O_ASYNC``, the kernel then sends ``SIGIO`` -- or
  the signal ``F_SETSIG`` chose -- to it), ``F_SETSIG``, the socket twins ``FIOSETOWN`` and
  ``SIOCSPGRP``; terminal control of the session the program runs in: ``TIOCSTI`` (typing
  into the terminal: the shell runs it after the program ends), ``TIOCLINUX``, ``TIOCSPGRP``,
  ``TIOCSCTTY``, ``TIOCNOTTY``, ``TIOCCONS``. ``F_SETOWN`` to the process itself (or 0) is
  allowed.
- **Changes to the file the descriptor is open on** (a write of that file, judged by the file
  rules): the kernel lets the owner change a file's attributes through a *read-only*
  descriptor -- ``FS_IOC_SETFLAGS`` (append-only, immutable, no-dump...), ``FS_IOC_SETVERSION``,
  ``FS_IOC_FSSETXATTR``, ``FS_IOC_ENABLE_VERITY``, and any other ``ioctl`` whose request
  carries data to the kernel (the ``_IOC_WRITE`` direction) on a file outside ``/dev``;
  ``F_SETLEASE`` (a lease makes other processes' ``open`` wait) and ``flock(LOCK_EX)``
  (an exclusive lock blocks the other processes that lock the file).
- **Freezing a file system** (``FIFREEZE``/``FITHAW``): ``privileges``.

Pipes, sockets and anonymous descriptors have no path: only the process-control commands
concern them. Everything the handlers use is captured when the guard is armed (no module
global is read at run time), and only exact ``int``/``bytes`` arguments are looked at (a forged
event may carry objects of the program's, whose methods must not run inside the hook).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# Linux values (python-sb runs on Linux; the fcntl module does not export all of them).
F_SETOWN, F_SETSIG, F_SETOWN_EX, F_SETLEASE, F_UNLCK = 8, 10, 15, 1024, 2
LOCK_EX = 2
#: ioctl requests that signal or steer other processes: name for the messages.
PROCESS_IOCTLS = {
    0x5412: "TIOCSTI",
    0x541C: "TIOCLINUX",
    0x5410: "TIOCSPGRP",
    0x540E: "TIOCSCTTY",
    0x5422: "TIOCNOTTY",
    0x541D: "TIOCCONS",
    0x8901: "FIOSETOWN",
    0x8902: "SIOCSPGRP",
}
#: ioctl requests that freeze or thaw a whole file system.
PRIVILEGE_IOCTLS = {0xC0045877: "FIFREEZE", 0xC0045878: "FITHAW"}
#: ioctl requests that change the file a descriptor is open on, whatever the path.
FILE_IOCTLS = {
    0x40086602: "FS_IOC_SETFLAGS",
    0x40046602: "FS_IOC32_SETFLAGS",
    0x40087602: "FS_IOC_SETVERSION",
    0x40047602: "FS_IOC32_SETVERSION",
    0x401C5820: "FS_IOC_FSSETXATTR",
    0x40806685: "FS_IOC_ENABLE_VERITY",
}
_IOC_WRITE_BIT = 1 << 30  # _IOC_WRITE in the direction bits (x86, arm, riscv)


def make_descriptor_handlers(
    judge_call: Callable[[str, str, str | None], None],
    judge_path: Callable[[Any, bool, int], Any],
    fd_path: Callable[[int], str | None],
    getpid: Callable[[], int],
) -> dict[str, Callable[[tuple[Any, ...]], None]]:
    """The handlers of ``fcntl.fcntl``, ``fcntl.ioctl`` and ``fcntl.flock``.

    ``judge_call(function, category, detail)`` refuses a sensitive call; ``judge_path(path,
    write, dir_fd)`` judges a file; ``fd_path(fd)`` gives the path a descriptor is open on."""

    # Captured now: the program can rebind this module's globals.
    type_, int_, bytes_, len_ = type, int, bytes, len
    from_bytes = int.from_bytes
    setown, setsig, setown_ex = F_SETOWN, F_SETSIG, F_SETOWN_EX
    setlease, unlock = F_SETLEASE, F_UNLCK
    lock_ex = LOCK_EX
    process_ioctls = dict(PROCESS_IOCTLS)
    privilege_ioctls = dict(PRIVILEGE_IOCTLS)
    file_ioctls = dict(FILE_IOCTLS)
    write_bit = _IOC_WRITE_BIT

    def write_of(fd: Any, what: str) -> None:
        """A change of the file ``fd`` is open on: judged as a write of its path."""
        if type_(fd) is not int_:
            return
        path = fd_path(fd)
        # Pipes, sockets and anonymous inodes have no path; a memfd is the program's.
        if path is not None and not path.startswith("/memfd:"):
            judge_path(path, True, -1)

    def own(pid: int) -> bool:
        return pid == 0 or pid == getpid()

    def on_fcntl(args: tuple[Any, ...]) -> None:
        if len_(args) < 3:
            return
        fd, cmd, arg = args[0], args[1], args[2]
        if type_(cmd) is not int_:
            return
        if cmd == setown:
            if type_(arg) is not int_ or not own(arg):
                judge_call("fcntl.fcntl", "process-control", "F_SETOWN: SIGIO to another process")
        elif cmd == setown_ex:
            # struct f_owner_ex {int type; pid_t pid;}: the owner is the process itself.
            if type_(arg) is not bytes_ or len_(arg) < 8 or not own(from_bytes(arg[4:8], "little")):
                judge_call(
                    "fcntl.fcntl", "process-control", "F_SETOWN_EX: SIGIO to another process"
                )
        elif cmd == setsig:
            judge_call(
                "fcntl.fcntl", "process-control", "F_SETSIG: the signal a descriptor's owner gets"
            )
        elif cmd == setlease and not (type_(arg) is int_ and arg == unlock):
            write_of(fd, "F_SETLEASE")

    def on_ioctl(args: tuple[Any, ...]) -> None:
        if len_(args) < 2:
            return
        fd, request = args[0], args[1]
        if type_(request) is not int_:
            return
        request &= 0xFFFFFFFF  # the kernel's unsigned int
        name = process_ioctls.get(request)
        if name is not None:
            judge_call("fcntl.ioctl", "process-control", name + ": another process or the terminal")
            return
        name = privilege_ioctls.get(request)
        if name is not None:
            judge_call("fcntl." + name, "privileges", name + ": a whole file system")
            return
        if request in file_ioctls:
            write_of(fd, file_ioctls[request])
            return
        if request & write_bit and type_(fd) is int_:
            path = fd_path(fd)
            if path is not None and not path.startswith(("/dev/", "/memfd:")):
                judge_path(path, True, -1)

    def on_flock(args: tuple[Any, ...]) -> None:
        if len_(args) < 2:
            return
        operation = args[1]
        if type_(operation) is int_ and operation & lock_ex:
            write_of(args[0], "flock(LOCK_EX)")

    return {"fcntl.fcntl": on_fcntl, "fcntl.ioctl": on_ioctl, "fcntl.flock": on_flock}
