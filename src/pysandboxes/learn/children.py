"""Learning what child processes do: seccomp user notification, in LEARNING mode only.

The Python layer records what the program's own interpreter does; a child process
(``subprocess.run(["cat", path])``, ``os.system``, a shell pipeline, a compiled helper, another
Python) is out of its sight. Without rules for it, the learned file's replay fails under every
kernel provider. This module observes children from the kernel side:

1. The supervisor (:class:`ChildObserver`, created by the learning session) listens on a Unix
   socket in the run's private temporary directory (:data:`SOCKET_NAME`).
2. The sandboxed interpreter, in ``child.py`` before the Python layer is armed and before the
   program runs, connects to it and installs a seccomp filter (:func:`filter_program`) whose
   file system calls (the ``open`` family, ``execve``, ``mkdir``, ``unlink``, ``rename``...)
   return ``SECCOMP_RET_USER_NOTIF``, with ``SECCOMP_FILTER_FLAG_NEW_LISTENER``. It sends the
   listener descriptor over the socket (``SCM_RIGHTS``) and closes its own copy
   (:func:`hand_over`), so that only the supervisor can answer.
3. The filter is inherited by every thread and process the program starts. For each call the
   supervisor reads the path from ``/proc/PID/mem``, resolves it against the caller's
   ``/proc/PID/cwd`` or ``/proc/PID/fd/N``, records it, and answers
   ``SECCOMP_USER_NOTIF_FLAG_CONTINUE``: the call proceeds unchanged. Learning enforces
   nothing, so reading the path before the kernel does is no TOCTOU hole; the mechanism is
   never set up by an enforcing run.
4. Calls made by the interpreter itself (and its forks that did not exec another program) are
   answered at once without being recorded: the Python layer already records them. A process
   is observed once it, or an ancestor below the interpreter, called ``execve``.

What a failure does: if the supervisor goes away (even by SIGKILL), the listener closes and
the kernel fails every filtered call of the program and its children with ``ENOSYS`` -- they
never hang. Processes the program leaves running after it ends get the same once the learning
session closes the listener (said on stderr).

When the mechanism cannot be used (not Linux, an architecture without a table here, a kernel
older than 5.5, seccomp blocked by a container, the switch :data:`SWITCH` set to ``off``), the
session says at the end exactly what was not learned, on stderr and in the learned file.

Standard library only: ``_ctypes`` through :mod:`pysandboxes.providers._linux` for
``seccomp(2)``, ``fcntl.ioctl`` for the listener, ``os`` for ``/proc``.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # as typing.TYPE_CHECKING: the child imports this before the program runs
if TYPE_CHECKING:
    import socket
    import threading
    from collections.abc import Mapping
    from typing import Final

#: Environment variable of ``python-sb`` that turns the mechanism off (``off``, ``0``, ``no``,
#: ``false``): for tests of the "not available" path, or a run where it gets in the way.
SWITCH: Final = "PYSANDBOXES_LEARN_CHILDREN"
_OFF_VALUES: Final = frozenset({"off", "0", "no", "false"})

#: Name of the hand-over socket in the run's private temporary directory.
SOCKET_NAME: Final = ".pysb-learn-children"

#: Oldest kernel with ``SECCOMP_USER_NOTIF_FLAG_CONTINUE`` (5.5).
MIN_KERNEL: Final = (5, 5)

# -- the calls observed ---------------------------------------------------------------------------

#: What each observed call does with its arguments: ``(kind, dirfd argument or None, path
#: argument, flags argument or None)``. Kinds: ``open`` (read or write from the flags),
#: ``open2`` (``openat2``: flags in the ``struct open_how`` the third argument points to),
#: ``exec``, ``read``, ``write``.
SPECS: Final[dict[str, tuple[tuple[str, int | None, int, int | None], ...]]] = {
    "open": (("open", None, 0, 1),),
    "openat": (("open", 0, 1, 2),),
    "openat2": (("open2", 0, 1, 2),),
    "creat": (("write", None, 0, None),),
    "execve": (("exec", None, 0, None),),
    "execveat": (("exec", 0, 1, 4),),
    "mkdir": (("write", None, 0, None),),
    "mkdirat": (("write", 0, 1, None),),
    "mknod": (("write", None, 0, None),),
    "mknodat": (("write", 0, 1, None),),
    "rmdir": (("write", None, 0, None),),
    "unlink": (("write", None, 0, None),),
    "unlinkat": (("write", 0, 1, None),),
    "rename": (("write", None, 0, None), ("write", None, 1, None)),
    "renameat": (("write", 0, 1, None), ("write", 2, 3, None)),
    "renameat2": (("write", 0, 1, None), ("write", 2, 3, None)),
    "link": (("read", None, 0, None), ("write", None, 1, None)),
    "linkat": (("read", 0, 1, None), ("write", 2, 3, None)),
    "symlink": (("write", None, 1, None),),
    "symlinkat": (("write", 1, 2, None),),
    "truncate": (("write", None, 0, None),),
}

#: System call numbers of the observed calls (aarch64 has only the ``*at`` forms).
NUMBERS: Final[dict[str, dict[str, int]]] = {
    "x86_64": {
        "open": 2, "creat": 85, "openat": 257, "openat2": 437, "execve": 59, "execveat": 322,
        "mkdir": 83, "mkdirat": 258, "mknod": 133, "mknodat": 259, "rmdir": 84, "unlink": 87,
        "unlinkat": 263, "rename": 82, "renameat": 264, "renameat2": 316, "link": 86,
        "linkat": 265, "symlink": 88, "symlinkat": 266, "truncate": 76,
    },
    "aarch64": {
        "openat": 56, "openat2": 437, "execve": 221, "execveat": 281, "mkdirat": 34,
        "mknodat": 33, "unlinkat": 35, "renameat2": 276, "linkat": 37, "symlinkat": 36,
        "truncate": 45,
    },
}  # fmt: skip

_RET_USER_NOTIF: Final = 0x7FC00000
_SECCOMP_SET_MODE_FILTER: Final = 1
_FILTER_FLAG_NEW_LISTENER: Final = 1 << 3
_USER_NOTIF_FLAG_CONTINUE: Final = 1
# ioctls of the listener (linux/seccomp.h): _IOWR('!', 0, struct seccomp_notif) (80 bytes),
# _IOWR('!', 1, struct seccomp_notif_resp) (24 bytes), _IOW('!', 2, __u64).
_IOCTL_NOTIF_RECV: Final = 0xC0502100
_IOCTL_NOTIF_SEND: Final = 0xC0182101
_IOCTL_NOTIF_ID_VALID: Final = 0x40082102
_NOTIF_SIZE: Final = 80

_AT_FDCWD: Final = -100
_AT_EMPTY_PATH: Final = 0x1000
_O_ACCMODE: Final = 0o3
_O_CREAT: Final = 0o100
_O_TRUNC: Final = 0o1000
_O_PATH: Final = 0o10000000
_O_TMPFILE: Final = 0o20000000
_PATH_MAX: Final = 4096
_CAP_SYS_ADMIN: Final = 21


def filter_program(arch: str | None = None) -> bytes:
    """The filter as ``struct sock_filter`` bytes: :data:`SPECS` calls of the native ABI notify
    the listener, everything else is allowed (learning refuses nothing).

    Built with the seccomp provider's assembler. ``ValueError`` for an architecture without a
    table here.
    """

    from pysandboxes.providers import _linux, seccomp

    arch = arch or _linux.machine()
    numbers = NUMBERS.get(arch)
    if numbers is None or arch not in _linux.AUDIT_ARCH:
        raise ValueError(f"no system call table for {arch!r}")
    items: list[tuple[object, ...]] = [
        ("stmt", seccomp._LD_W_ABS, seccomp._OFF_ARCH),
        ("jump", seccomp._JEQ_K, _linux.AUDIT_ARCH[arch], None, "allow"),
        ("stmt", seccomp._LD_W_ABS, seccomp._OFF_NR),
    ]
    if arch == "x86_64":
        items.append(("jump", seccomp._JGE_K, seccomp._X32_SYSCALL_BIT, "allow", None))
    for name in sorted(numbers, key=numbers.__getitem__):
        items.append(("jump", seccomp._JEQ_K, numbers[name], "notify", None))
    items += [
        ("label", "allow"),
        seccomp._ret(seccomp._RET_ALLOW),
        ("label", "notify"),
        seccomp._ret(_RET_USER_NOTIF),
    ]
    return seccomp._assemble(items)


def switched_off(environ: Mapping[str, str]) -> bool:
    """Whether :data:`SWITCH` turns the mechanism off in ``environ``."""

    return environ.get(SWITCH, "").strip().lower() in _OFF_VALUES


def unavailable_reason() -> str | None:
    """Why this machine cannot observe children (checked by the supervisor before the run),
    or ``None``. The kernel's own refusal, if any, comes from the child (:func:`hand_over`)."""

    from pysandboxes.platform_caps import CAPS, not_here

    if not CAPS.linux or sys.platform != "linux":  # the second for type checkers
        return not_here("seccomp user notification")
    from pysandboxes.providers import _linux

    if not _linux.supported() or _linux.machine() not in NUMBERS:
        return f"no system call table for this architecture ({_linux.machine()})"
    release = os.uname().release
    try:
        version = tuple(int(part) for part in release.split("-", 1)[0].split(".")[:2])
    except ValueError:
        return None  # an unusual release string: let the kernel answer
    if version < MIN_KERNEL:
        return (
            f"kernel {release} is older than 5.5 (seccomp user notification with "
            "SECCOMP_USER_NOTIF_FLAG_CONTINUE is needed)"
        )
    return None


# -- the interpreter's side -----------------------------------------------------------------------


def install_listener() -> int:
    """Install :func:`filter_program` on the calling thread; the listener descriptor
    (close-on-exec). ``OSError`` with the kernel's reason when it refuses.

    ``no_new_privs`` is set first unless the process holds ``CAP_SYS_ADMIN`` (the kernel asks
    one or the other): a learning run as root keeps set-user-ID programs working.
    """

    from pysandboxes.providers import _linux

    program = filter_program()
    try:
        privileged = bool(_linux.capabilities().get("CapEff", 0) & (1 << _CAP_SYS_ADMIN))
    except OSError:
        privileged = False
    if not privileged:
        _linux.set_no_new_privs()
    keep, address = _linux.pinned_buffer(program)
    fprog = (len(program) // 8).to_bytes(2, sys.byteorder) + bytes(6)
    fprog += address.to_bytes(8, sys.byteorder)
    fd = _linux.syscall("seccomp", _SECCOMP_SET_MODE_FILTER, _FILTER_FLAG_NEW_LISTENER, fprog)
    del keep
    os.set_inheritable(fd, False)
    return fd


def refusal_text(exc: OSError) -> str:
    """The kernel's refusal to install the filter, as the learning summary says it."""

    import errno

    if exc.errno == errno.ENOSYS:
        return "this kernel has no seccomp"
    if exc.errno == errno.EINVAL:
        return "this kernel refuses a seccomp filter with a user-notification listener"
    if exc.errno in (errno.EPERM, errno.EACCES):
        return "seccomp filters are refused here (a container's seccomp profile?)"
    if exc.errno == errno.EBUSY:
        return "another seccomp listener is already installed on this process"
    return f"the seccomp filter could not be installed: {exc.strerror or exc}"


def hand_over(tmpdir: str) -> None:
    """In the interpreter of a learning run, before the program runs: install the filter and
    hand the listener to the supervisor waiting on ``tmpdir``/:data:`SOCKET_NAME`.

    Nothing happens when the socket is absent (the supervisor does not observe children). A
    refusal of the kernel is sent instead of the listener, for the learning summary. Once the
    filter is installed the listener must reach the supervisor: if it cannot be sent, every
    file operation of the program would fail, so the run ends here, before the program starts.
    """
    if sys.platform != "linux":  # for type checkers: used where CAPS.linux only
        raise OSError("child observation needs Linux")

    path = os.path.join(tmpdir, SOCKET_NAME)
    if not os.path.exists(path):
        return
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            sock.connect(path)
        except OSError:
            return  # the supervisor gave up waiting: it reports children as not learned
        try:
            listener = install_listener()
        except (OSError, ValueError) as exc:
            reason = refusal_text(exc) if isinstance(exc, OSError) else str(exc)
            try:  # noqa: SIM105 (the supervisor then reports "not handed over")
                sock.sendall(b"E" + reason.encode("utf-8", "replace"))
            except OSError:
                pass
            return
        try:
            socket.send_fds(sock, [b"L"], [listener])
        except OSError as exc:
            sys.stderr.write(
                f"python-sb --learn: cannot hand the seccomp listener to python-sb ({exc}); "
                "the program's file operations would all fail: nothing was run\n"
            )
            os._exit(2)
        finally:
            os.close(listener)
    finally:
        sock.close()


# -- the supervisor's side ------------------------------------------------------------------------


def _read_small(path: str) -> bytes:
    if sys.platform != "linux":  # for type checkers: used where CAPS.linux only
        raise OSError("child observation needs Linux")
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


class _Task:
    """What ``/proc`` says of a thread: its process, that process's parent and start time."""

    __slots__ = ("ppid", "start", "tgid")

    def __init__(self, tgid: int, ppid: int, start: int) -> None:
        self.tgid = tgid
        self.ppid = ppid
        self.start = start


def _process(pid: int) -> tuple[int, int] | None:
    """``(parent pid, start time)`` of process ``pid`` from ``/proc/PID/stat``, or ``None``."""

    try:
        data = _read_small(f"/proc/{pid}/stat")
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return int(fields[1]), int(fields[19])  # ppid (4th field), starttime (22nd)
    except (IndexError, ValueError):
        return None


def _task(tid: int) -> _Task | None:
    try:
        data = _read_small(f"/proc/{tid}/status")
    except OSError:
        return None
    tgid = None
    for line in data.splitlines():
        if line.startswith(b"Tgid:"):
            tgid = int(line.split()[1])
            break
    if tgid is None:
        return None
    process = _process(tgid)
    if process is None:
        return None
    return _Task(tgid, process[0], process[1])


def read_string(tid: int, address: int) -> str | None:
    """The NUL-terminated string at ``address`` in thread ``tid``'s memory, or ``None``."""
    if sys.platform != "linux":  # for type checkers: used where CAPS.linux only
        raise OSError("child observation needs Linux")

    if not address:
        return None
    try:
        fd = os.open(f"/proc/{tid}/mem", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        data = b""
        position = address
        while len(data) < _PATH_MAX:
            size = 4096 - position % 4096  # never cross into a page that may be unmapped
            try:
                chunk = os.pread(fd, size, position)
            except OSError:
                return None
            if not chunk:
                return None
            end = chunk.find(b"\0")
            if end >= 0:
                return (data + chunk[:end]).decode("utf-8", "surrogateescape")
            data += chunk
            position += len(chunk)
        return None
    finally:
        os.close(fd)


def _read_u64(tid: int, address: int) -> int | None:
    if sys.platform != "linux":  # for type checkers: used where CAPS.linux only
        raise OSError("child observation needs Linux")
    try:
        fd = os.open(f"/proc/{tid}/mem", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        data = os.pread(fd, 8, address)
    except OSError:
        return None
    finally:
        os.close(fd)
    return int.from_bytes(data, sys.byteorder) if len(data) == 8 else None


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def resolve(tid: int, dirfd: int | None, path: str) -> str | None:
    """``path`` as thread ``tid`` names it, made absolute: against its working directory
    (``/proc/TID/cwd``) or the directory open as ``dirfd`` (``/proc/TID/fd/N``). ``None`` when
    that base is not a path (a pipe, a socket) or cannot be read."""

    if path.startswith("/"):
        return os.path.normpath(path)
    if dirfd is None or dirfd == _AT_FDCWD:
        link = f"/proc/{tid}/cwd"
    elif dirfd >= 0:
        link = f"/proc/{tid}/fd/{dirfd}"
    else:
        return None
    try:
        base = os.readlink(link)
    except OSError:
        return None
    if not base.startswith("/") or base.endswith(" (deleted)"):
        return None
    return os.path.normpath(os.path.join(base, path)) if path else base


class ChildObserver:
    """The supervisor's half: waits for the listener, answers every notification, records the
    accesses of observed processes (see the module docstring).

    Lifecycle: created before the child is spawned (the socket must exist when the interpreter
    looks for it), :meth:`start` once spawned, :meth:`stop` once the program has ended; then
    :meth:`records` gives the accesses as the Python layer's records, and :attr:`status` and
    :attr:`reason` say whether children could be observed.
    """

    #: How long :meth:`stop` keeps answering processes the program left running.
    GRACE = 1.0

    def __init__(self, tmpdir: str | None, environ: Mapping[str, str]) -> None:
        self.status = "waiting"  # waiting / observing / off / unavailable
        self.reason = ""
        self._accesses: dict[tuple[str, str], None] = {}
        self.executables: dict[str, None] = {}
        self.skipped_proc = 0
        self.left_running = False
        self.errors = 0
        self._server: socket.socket | None = None
        self._socket_path = ""
        self._listener = -1
        self._thread: threading.Thread | None = None
        self._stop_at: float | None = None
        self._interpreter = -1
        self._identity: tuple[str, bytes] | None = None
        self._observed: dict[tuple[int, int], bool] = {}
        self._interpreter_execd = False
        self._names: dict[int, str] = {}
        self._execs: frozenset[int] = frozenset()
        self._granted: tuple[str, ...] = ()
        if switched_off(environ):
            self.status, self.reason = "off", f"switched off ({SWITCH}={environ.get(SWITCH)})"
            return
        if not tmpdir:
            self.status, self.reason = "unavailable", "the run has no private temporary directory"
            return
        why = unavailable_reason()
        if why is not None or sys.platform != "linux":  # the second for type checkers
            self.status, self.reason = "unavailable", why or "needs Linux"
            return
        import socket

        path = os.path.join(tmpdir, SOCKET_NAME)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(path)
            server.listen(1)
        except OSError as exc:
            server.close()
            self.status, self.reason = "unavailable", f"cannot create {path}: {exc}"
            return
        self._server = server
        self._socket_path = path

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        """Serve in a daemon thread (the first call only)."""

        import threading

        if self._server is None or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="python-sb-children", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """The program has ended: serve what is left for :attr:`GRACE` seconds at most, then
        close the listener (the filtered calls of processes still running then fail with
        ``ENOSYS``)."""

        import time

        self._stop_at = time.monotonic() + self.GRACE
        if self._thread is not None:
            self._thread.join()
        self._close_server()
        if self._listener >= 0:
            os.close(self._listener)
            self._listener = -1
        if self.status == "waiting":
            self.status = "unavailable"
            self.reason = self.reason or "the interpreter did not hand the seccomp listener over"

    def _close_server(self) -> None:
        server = self._server
        if server is not None:
            server.close()
            self._server = None
            try:  # noqa: SIM105 (a run's tmpdir is removed anyway)
                os.unlink(self._socket_path)
            except OSError:
                pass

    def _stopping(self) -> bool:
        import time

        return self._stop_at is not None and time.monotonic() >= self._stop_at

    def _run(self) -> None:
        try:
            if self._accept():
                self._serve()
        except Exception as exc:  # never let the supervisor's thread die silently
            self.errors += 1
            if self.status == "waiting":
                self.status, self.reason = "unavailable", f"{type(exc).__name__}: {exc}"

    def _accept(self) -> bool:
        """Wait for the interpreter; take the listener (or its refusal) from it."""

        if sys.platform != "linux":  # for type checkers: unavailable_reason() stops it before
            raise OSError("Linux only")

        import select
        import socket

        server = self._server
        assert server is not None
        while True:
            ready, _, _ = select.select([server], [], [], 0.1)
            if ready:
                break
            if self._stop_at is not None:
                return False
        conn, _ = server.accept()
        self._close_server()
        with conn:
            conn.settimeout(10)
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
            self._interpreter = int.from_bytes(creds[:4], sys.byteorder)
            try:
                message, fds, _, _ = socket.recv_fds(conn, 4096, 1)
            except OSError as exc:
                self.status, self.reason = "unavailable", f"no listener received ({exc})"
                return False
        if fds and message[:1] == b"L":
            self._listener = fds[0]
            for extra in fds[1:]:
                os.close(extra)
            self._identity = self._image(self._interpreter)
            own = _process(self._interpreter)
            if own is not None:
                self._observed[(self._interpreter, own[1])] = False
            self._names = _names_by_number()
            self._execs = frozenset(n for n, name in self._names.items() if "exec" in name)
            self._granted = granted_everywhere()
            self.status = "observing"
            return True
        for fd in fds:
            os.close(fd)
        text = message[1:].decode("utf-8", "replace") if message[:1] == b"E" else ""
        self.status = "unavailable"
        self.reason = text or "the interpreter did not hand the seccomp listener over"
        return False

    def _serve(self) -> None:
        if sys.platform != "linux":  # for type checkers: used where CAPS.linux only
            raise OSError("child observation needs Linux")
        import select

        poller = select.poll()
        poller.register(self._listener, select.POLLIN)
        while True:
            events = poller.poll(50)
            if self._stopping():  # checked even when busy: a child left looping must not hold us
                self.left_running = True
                return
            for _, event in events:
                if event & select.POLLIN:
                    self._answer_one()
                elif event & (select.POLLHUP | select.POLLERR):
                    return  # no process holds the filter any more

    def _answer_one(self) -> None:
        if sys.platform != "linux":  # for type checkers: used where CAPS.linux only
            raise OSError("child observation needs Linux")
        import fcntl

        buffer = bytearray(_NOTIF_SIZE)
        try:
            fcntl.ioctl(self._listener, _IOCTL_NOTIF_RECV, buffer, True)
        except OSError:
            return  # the caller died or was interrupted: the notification is gone
        notif_id = int.from_bytes(buffer[0:8], sys.byteorder)
        tid = int.from_bytes(buffer[8:12], sys.byteorder)
        nr = int.from_bytes(buffer[16:20], sys.byteorder, signed=True)
        args = [int.from_bytes(buffer[32 + 8 * i : 40 + 8 * i], sys.byteorder) for i in range(6)]
        try:
            self._observe(notif_id, tid, nr, args)
        except Exception:
            self.errors += 1
        finally:
            response = notif_id.to_bytes(8, sys.byteorder) + bytes(12)
            response += _USER_NOTIF_FLAG_CONTINUE.to_bytes(4, sys.byteorder)
            try:  # noqa: SIM105 (the caller may have died meanwhile)
                fcntl.ioctl(self._listener, _IOCTL_NOTIF_SEND, bytearray(response), True)
            except OSError:
                pass

    def _still_valid(self, notif_id: int) -> bool:
        """Whether the caller still waits on this notification (its ``/proc`` entries were not
        those of another process that reused the number)."""
        if sys.platform != "linux":  # for type checkers: used where CAPS.linux only
            raise OSError("child observation needs Linux")

        import fcntl

        request = bytearray(notif_id.to_bytes(8, sys.byteorder))
        try:
            fcntl.ioctl(self._listener, _IOCTL_NOTIF_ID_VALID, request, True)
        except OSError:
            return False
        return True

    # -- whose call is it -----------------------------------------------------------------------

    def _image(self, pid: int) -> tuple[str, bytes] | None:
        try:
            return os.readlink(f"/proc/{pid}/exe"), _read_small(f"/proc/{pid}/cmdline")
        except OSError:
            return None

    def _is_observed(self, task: _Task) -> bool:
        """Whether ``task``'s process runs another program than the guarded interpreter: it
        called ``execve``, or is the fork of a process known to be observed (a shell's fork
        before a redirect). A process whose parent never made an observed call is judged by
        its image: a fork of the interpreter still runs it with the same command line."""

        key = (task.tgid, task.start)
        known = self._observed.get(key)
        if known is None:
            parent = _process(task.ppid) if task.ppid > 1 else None
            if parent is not None:
                known = self._observed.get((task.ppid, parent[1]))
            if known is None:
                known = self._image(task.tgid) != self._identity
            self._observed[key] = known
        return known

    # -- recording ------------------------------------------------------------------------------

    def _observe(self, notif_id: int, tid: int, nr: int, args: list[int]) -> None:
        name = self._names.get(nr)
        if name is None:
            return
        if tid == self._interpreter and not self._interpreter_execd and nr not in self._execs:
            return  # the interpreter itself, the fast path: the Python layer records it
        task = _task(tid)
        if task is None:
            return
        if nr in self._execs:
            self._observed[(task.tgid, task.start)] = True
            if task.tgid == self._interpreter:
                self._interpreter_execd = True
        elif not self._is_observed(task):
            return
        found: list[tuple[str, str]] = []
        for kind, dirfd_index, path_index, flags_index in SPECS[name]:
            text = read_string(tid, args[path_index])
            if text is None:
                continue
            dirfd = None if dirfd_index is None else _int32(args[dirfd_index])
            flags = args[flags_index] if flags_index is not None else 0
            if kind == "open2" and flags_index is not None:  # flags in struct open_how
                flags = _read_u64(tid, args[flags_index]) or 0
                kind = "open"
            if kind == "exec" and not text and flags & _AT_EMPTY_PATH and dirfd is not None:
                path = resolve(tid, dirfd, "")  # fexecve: the open file itself
            elif not text:
                continue
            else:
                path = resolve(tid, dirfd, text)
            if path is not None:
                found.append((self._operation(kind, flags), path))
        if not found or not self._still_valid(notif_id):
            return  # the numbers may have named another process by the time /proc was read
        for operation, path in found:
            self._record(operation, path)

    @staticmethod
    def _operation(kind: str, flags: int) -> str:
        if kind != "open":
            return kind
        if flags & _O_PATH:
            return "none"
        if flags & _O_ACCMODE or flags & (_O_CREAT | _O_TRUNC | _O_TMPFILE):
            return "write"
        return "read"

    def _record(self, operation: str, path: str) -> None:
        if operation == "none":
            return
        if path == "/proc" or path.startswith("/proc/"):
            self.skipped_proc += 1  # names a process of this run: no rule can say it
            return
        if operation == "exec":
            if not os.path.isfile(path):
                return  # a shell trying each directory of PATH: only the one that exists runs
            self.executables.setdefault(path, None)
            if not _beneath_any(path, self._granted):  # helpers in /usr/lib need no rule
                self._accesses.setdefault(("read", path), None)
            interpreter = script_interpreter(path)
            if interpreter is not None and interpreter not in self.executables:
                self._record("exec", interpreter)  # opened by the kernel: no call to observe
            return
        if operation == "read" and not os.path.exists(path):
            return  # fails the same way under every provider: nothing to grant
        if operation == "read" and _beneath_any(path, self._granted):
            return
        if operation == "write" and not os.path.isdir(os.path.dirname(path)):
            return
        self._accesses.setdefault((operation, path), None)

    def records(self) -> list[dict[str, str]]:
        """The observed accesses as the Python layer writes its records (``kind: file``)."""

        return [{"kind": "file", "op": op, "path": path} for op, path in self._accesses]


def script_interpreter(path: str) -> str | None:
    """The interpreter a ``#!`` line names (``/usr/bin/env`` in ``#!/usr/bin/env sh``), or
    ``None``. The kernel opens it itself when the script is executed, so no observed call shows
    it, yet Landlock refuses to run the script unless it may execute the interpreter too."""

    try:
        with open(path, "rb") as handle:
            head = handle.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].split()
    if not words or not words[0].startswith(b"/"):
        return None
    return os.path.normpath(words[0].decode("utf-8", "surrogateescape"))


def granted_everywhere() -> tuple[str, ...]:
    """System paths every kernel provider grants read-only without a rule: those of
    ``landlock``'s system list that the namespace providers' tree (``bwrap``, ``unshare``) also
    holds -- the dynamic loader, shared libraries, locales under ``/usr/lib``, name-service and
    time-zone files. A child's read there needs no rule line (a file under ``/usr/bin`` does:
    Landlock grants no program directory)."""

    if sys.platform != "linux":  # for type checkers: only where CAPS.linux
        return ()
    from pysandboxes.providers import _ns_mounts, landlock

    tree_top = {f"/{name}" for name in _ns_mounts.SYSTEM_TOP}
    tree_etc = {f"/etc/{name}" for name in (*_ns_mounts.SYSTEM_ETC, *_ns_mounts.GENERATED_ETC)}
    found: list[str] = []
    for path in landlock.SYSTEM_READ:
        top = "/" + path.split("/")[1]
        if top in tree_top or path in tree_etc:
            found.append(path)
    return tuple(found)


def _beneath_any(path: str, bases: tuple[str, ...]) -> bool:
    return any(path == base or path.startswith(base + "/") for base in bases)


def _names_by_number() -> dict[int, str]:
    """Observed call names by number, for the running architecture."""

    from pysandboxes.providers import _linux

    return {number: name for name, number in NUMBERS.get(_linux.machine(), {}).items()}


# -- what the learning session says ---------------------------------------------------------------


#: ``process-exec`` functions that start no other program: a fork runs the same interpreter,
#: whose Python layer goes on recording (an ``exec`` after it is recorded as ``os.exec*``).
RUN_NO_PROGRAM: Final = frozenset(
    {"os.fork", "os.forkpty", "pty.fork", "_xxsubinterpreters.create"}
)


def spawned(functions: list[str]) -> str:
    """The process-starting functions the Python layer saw, for the summary (``os.system,
    subprocess.Popen``)."""

    return ", ".join(sorted(set(functions)))


def not_learned_lines(observer: ChildObserver, functions: list[str]) -> list[str]:
    """What was not learned about child processes, for stderr and the learned file (one
    comment line each); empty when the program started none, or when they were observed."""

    functions = [f for f in functions if f not in RUN_NO_PROGRAM]
    if not functions or observer.status == "observing":
        return []
    return [
        f"child processes were started ({spawned(functions)}) but NOT observed:",
        f"{observer.reason}.",
        "The programs they ran and the files they read and wrote are NOT in these rules:",
        "add them by hand (expose-ro=/usr/bin/PROGRAM for each program, and the directories",
        "of their files), or learn again where seccomp user notification works (Linux 5.5+,",
        "no container profile that blocks seccomp).",
    ]


def observed_lines(observer: ChildObserver) -> list[str]:
    """What the observation saw and could not turn into rules, for stderr."""

    lines: list[str] = []
    if observer.status != "observing":
        return lines
    if observer.executables:
        names = sorted({os.path.basename(path) for path in observer.executables})
        lines.append(
            f"observed child processes (seccomp user notification): they ran {', '.join(names)}"
        )
    if observer.skipped_proc:
        lines.append(
            f"child processes read {observer.skipped_proc} /proc entr"
            f"{'y' if observer.skipped_proc == 1 else 'ies'}: no rule can name a process of "
            "one run, so none was learned"
        )
    if observer.left_running:
        lines.append(
            "processes the program left running are no longer observed: their file system "
            "calls fail with ENOSYS from now on (seccomp user notification has no way back)"
        )
    return lines
