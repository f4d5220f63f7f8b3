"""``listen()`` under Landlock: only on a socket bound through a granted ``bind()`` (issue 23,
class 2).

``listen()`` on a TCP socket that was never bound makes the kernel bind it first, to a port it
picks on every address, and Landlock's bind rule is never consulted (Landlock up to ABI 7
judges ``bind()`` and ``connect()`` only): a program with no ``IN`` rule at all served the host
on an ephemeral port. A seccomp filter sees only ``listen``'s descriptor number, not whether
the socket behind it is bound, so the call is handed to python-sb instead
(``SECCOMP_RET_USER_NOTIF``, the filter of ``providers/seccomp.py`` with ``listen="notify"``):

1. the ``pre_exec`` step of the program's process installs the filter with a listener and sends
   the listener descriptor to python-sb (``SCM_RIGHTS`` over a socket pair made here), keeping
   no copy: only python-sb can answer;
2. python-sb (which stays as the program's parent, ``Prepared.needs_parent``) answers each
   ``listen(fd, backlog)`` in a thread: it takes a copy of the caller's socket
   (``pidfd_getfd``: python-sb is its ancestor, outside the Landlock domain), and an
   ``AF_INET``/``AF_INET6`` socket whose local port is 0 (never bound) is refused with
   ``EACCES``, Landlock's own answer to a bind it refuses. Otherwise python-sb calls
   ``listen`` on its copy -- the same socket, so no other thread of the program can swap the
   descriptor between the check and the call -- and answers with that call's result.

What fails closed: if python-sb goes away, every ``listen`` of the program fails with
``ENOSYS`` (the kernel's answer when a listener is gone); a copy refused by the kernel (a
process made non-dumpable) is refused with ``EPERM``.

Used only where it matters (``landlock.listen_mode``): Landlock restricts binding, port 0 (the
kernel's choice) is not granted, and something may legitimately listen (an ``IN`` rule, or
``AF_UNIX`` sockets). With no ``IN`` rule and no Unix sockets the filter refuses ``listen``
outright, and nothing stays behind.
"""

from __future__ import annotations

import os
import sys

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

# ioctls of the listener (linux/seccomp.h): _IOWR('!', 0, struct seccomp_notif) (80 bytes),
# _IOWR('!', 1, struct seccomp_notif_resp) (24 bytes), _IOW('!', 2, __u64).
IOCTL_NOTIF_RECV = 0xC0502100
IOCTL_NOTIF_SEND = 0xC0182101
IOCTL_NOTIF_ID_VALID = 0x40082102
NOTIF_SIZE = 80
_PIDFD_THREAD = 0o200  # O_EXCL: a thread's pidfd (Linux 6.9)
_AF_INET, _AF_INET6 = 2, 10


class ListenGuard:
    """One run's guard: made in ``prepare`` (the parent), handed the listener by the program's
    process (:meth:`hand_over`), serving from :meth:`start` until the program's last process
    is gone."""

    def __init__(self) -> None:
        import _socket

        ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
        self._ours = ours
        self._theirs = theirs
        #: The program's end: kept across python-sb's closing of inherited descriptors, not
        #: inheritable (gone at exec).
        self.child_fd: int = theirs.fileno()
        self.answered = 0
        self.refused = 0
        self._closed = False

    def hand_over(self, listener: int) -> None:
        """In the program's process, once the filter is installed: send the listener to
        python-sb and close every copy here."""

        import _socket

        rights = (_socket.SOL_SOCKET, _socket.SCM_RIGHTS, listener.to_bytes(4, sys.byteorder))
        try:
            self._theirs.sendmsg([b"L"], [rights])
        finally:
            os.close(listener)
            self._theirs.close()

    def start(self) -> None:
        """Serve in a thread of python-sb (``_thread``: ``threading`` costs start-up time),
        which blocks every signal: python-sb's supervisor takes them in its main thread
        (``sigwaitinfo``), and one delivered here would escape it."""

        import _signal  # type: ignore[import-not-found,unused-ignore]
        import _thread

        previous = _signal.pthread_sigmask(_signal.SIG_BLOCK, _signal.valid_signals())
        try:
            _thread.start_new_thread(self._serve, ())
        finally:
            _signal.pthread_sigmask(_signal.SIG_SETMASK, previous)

    def close(self) -> None:
        """The run is over (``Prepared.cleanup``)."""

        self._closed = True
        for sock in (self._ours, self._theirs):
            try:  # noqa: SIM105 (contextlib costs start-up time)
                sock.close()
            except OSError:
                pass

    # -- python-sb's side ---------------------------------------------------------------------

    def _receive(self) -> int:
        import _socket
        import select

        # Waited for in steps: python-sb's own copy of the program's end stays open in the
        # parent, so a child that died before sending would never end a blocking receive.
        poller = select.poll()
        poller.register(self._ours.fileno(), select.POLLIN)
        while not poller.poll(200):
            if self._closed:
                return -1
        try:
            _, ancillary, _, _ = self._ours.recvmsg(1, _socket.CMSG_SPACE(4))
        except OSError:
            return -1
        for level, kind, data in ancillary:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS and len(data) >= 4:
                return int.from_bytes(data[:4], sys.byteorder)
        return -1

    def _serve(self) -> None:
        import select

        listener = self._receive()
        self._theirs.close()  # python-sb's copy of the program's end (the child has its own)
        if listener < 0:
            return
        poller = select.poll()
        poller.register(listener, select.POLLIN)
        try:
            while True:
                for _, event in poller.poll():
                    if event & select.POLLIN:
                        self._answer_one(listener)
                    elif event & (select.POLLHUP | select.POLLERR):
                        return  # no process holds the filter any more
        finally:
            os.close(listener)

    def _answer_one(self, listener: int) -> None:
        import fcntl

        buffer = bytearray(NOTIF_SIZE)
        try:
            fcntl.ioctl(listener, IOCTL_NOTIF_RECV, buffer, True)
        except OSError:
            return  # the caller died or was interrupted: the notification is gone
        notif_id = int.from_bytes(buffer[0:8], sys.byteorder)
        tid = int.from_bytes(buffer[8:12], sys.byteorder)
        fd = int.from_bytes(buffer[32:36], sys.byteorder, signed=True)
        backlog = int.from_bytes(buffer[40:44], sys.byteorder, signed=True)
        try:
            error = self._judge(listener, notif_id, tid, fd, backlog)
        except Exception:  # never let the program's listen hang on a bug here: refuse it
            error = 13  # EACCES
        if error:
            self.refused += 1
        else:
            self.answered += 1
        response = notif_id.to_bytes(8, sys.byteorder) + bytes(8)
        response += (-error).to_bytes(4, sys.byteorder, signed=True) + bytes(4)
        try:  # noqa: SIM105 (the caller may have died meanwhile)
            fcntl.ioctl(listener, IOCTL_NOTIF_SEND, bytearray(response), True)
        except OSError:
            pass

    def _judge(self, listener: int, notif_id: int, tid: int, fd: int, backlog: int) -> int:
        """``listen(fd, backlog)`` of task ``tid``: 0 when python-sb made the call on the
        program's behalf, else the errno to answer."""

        import errno

        pidfd = _pidfd(tid)
        if pidfd < 0:
            return errno.ESRCH
        try:
            if not _still_valid(listener, notif_id):
                return errno.ESRCH  # the caller is gone: the number may name another process
            from pysandboxes.providers import _linux

            try:
                copy = _linux.syscall("pidfd_getfd", pidfd, fd, 0)
            except OSError as exc:
                return exc.errno if exc.errno == errno.EBADF else errno.EPERM
        finally:
            os.close(pidfd)
        import _socket

        try:
            sock = _socket.socket(fileno=copy)
        except OSError as exc:
            os.close(copy)
            return exc.errno or errno.ENOTSOCK
        try:
            if sock.family in (_AF_INET, _AF_INET6) and sock.getsockname()[1] == 0:
                return errno.EACCES  # never bound: the kernel would pick a port no rule grants
            sock.listen(backlog)
        except OSError as exc:
            return exc.errno or errno.EINVAL
        finally:
            sock.close()
        return 0


def _pidfd(tid: int) -> int:
    """A pidfd of task ``tid`` (a thread's where the kernel has them, else its process's)."""

    try:
        return os.pidfd_open(tid, _PIDFD_THREAD)
    except OSError:
        pass
    try:
        return os.pidfd_open(tid, 0)
    except OSError:
        pass
    try:
        with open(f"/proc/{tid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"Tgid:"):
                    return os.pidfd_open(int(line.split()[1]), 0)
    except (OSError, ValueError):
        pass
    return -1


def _still_valid(listener: int, notif_id: int) -> bool:
    import fcntl

    try:
        fcntl.ioctl(listener, IOCTL_NOTIF_ID_VALID, bytearray(notif_id.to_bytes(8, sys.byteorder)))
    except OSError:
        return False
    return True
