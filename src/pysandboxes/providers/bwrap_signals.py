"""Signals to the program bubblewrap runs, not to bubblewrap (``os-sandbox=bwrap``).

bubblewrap forwards no signal: a SIGTERM sent to it ends it, and ``--die-with-parent`` then
kills the program without running its handler. Its reaper (PID 1 of the new PID namespace)
cannot be used either: init ignores every signal it has no handler for. So python-sb stays as
the parent of a bwrap run and delivers the signals it receives to the program itself:

- bubblewrap is asked for ``--info-fd``: it writes the reaper's PID (in python-sb's PID
  namespace) right after creating it;
- the program is the reaper's first child (``/proc/PID/task/PID/children``), found when the first
  signal must be delivered (a run that receives none pays nothing) and held by a pidfd from then
  on, so a recycled PID can never receive a signal meant for the program;
- a signal a process sent to python-sb goes to the program, as ``kill`` would have sent it to
  ``python3``; one the terminal generated (Ctrl-C, hang-up, window size) goes to the program's
  process group (the session ``--new-session`` made, which the reaper leads: it ignores them),
  as the terminal would have sent it to the foreground job. ``--new-session`` put the program
  out of the terminal's reach, and bubblewrap itself runs in a process group of its own so that
  the terminal's signals do not end it.

A program killed by signal N is reported by bubblewrap as exit status 128+N (SPEC §1 accepts it).
"""

from __future__ import annotations

import os
import sys
import time

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    import signal
else:  # the C module, same names with plain ints: ``signal`` imports ``enum`` (~3 ms)
    import _signal as signal

#: How long a signal waits for the program to exist (bubblewrap builds the tree first: a few ms).
FIND_DEADLINE = 10.0


def parse_child_pid(info: bytes) -> int | None:
    """The ``child-pid`` of bubblewrap's ``--info-fd`` JSON document (read without ``json``:
    it is three integer fields)."""

    key = b'"child-pid":'
    start = info.find(key)
    if start < 0:
        return None
    digits = bytearray()
    for byte in info[start + len(key) :]:
        if 48 <= byte <= 57:
            digits.append(byte)
        elif digits or byte not in b" \t\r\n":
            break
    return int(digits) if digits else None


def children_of(pid: int) -> list[int]:
    """The children of ``pid`` (its main thread's), oldest first; empty once it is gone."""

    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as handle:
            return [int(word) for word in handle.read().split()]
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return []


def is_running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""

    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except (FileNotFoundError, ProcessLookupError):
        return False
    # Field 3, after the parenthesised command name (which may contain spaces and parentheses).
    state = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]
    return state not in (b"Z", b"X", b"")


class BwrapSignalRelay:
    """Find the program inside a bwrap sandbox and send it the signals python-sb receives.

    ``info_fd`` goes to bubblewrap as ``--info-fd`` (and in ``pass_fds``); the supervisor calls
    :meth:`started` once bubblewrap runs, :meth:`deliver` for each signal, :meth:`close` at the
    end.
    """

    #: What the supervisor watches and hands over: the terminal's and the usual ``kill`` signals.
    signals: tuple[int, ...] = (
        signal.SIGHUP,
        signal.SIGINT,
        signal.SIGQUIT,
        signal.SIGTERM,
        signal.SIGUSR1,
        signal.SIGUSR2,
        signal.SIGWINCH,
    )

    def __init__(self) -> None:
        self._read, self.info_fd = os.pipe()
        os.set_inheritable(self.info_fd, True)
        self._info = b""
        self._info_done = False
        self._program: int | None = None
        self._pidfd: int | None = None
        self._bwrap = 0

    def started(self, pid: int) -> None:
        """bubblewrap runs as ``pid``: drop python-sb's copy of the write end, so that a
        bubblewrap that fails before writing gives end of file rather than a read that never
        returns."""

        self._bwrap = pid
        if self.info_fd >= 0:
            os.close(self.info_fd)
            self.info_fd = -1

    def _reaper(self) -> int | None:
        while not self._info_done and self._read >= 0:
            chunk = os.read(self._read, 4096)
            if not chunk:
                self._info_done = True
                break
            self._info += chunk
            if b"}" in chunk:
                self._info_done = True
        return parse_child_pid(self._info)

    def program(self) -> int | None:
        """The program's PID (in python-sb's PID namespace), waiting for it to be created if it
        is not yet; None once the sandbox has ended."""

        if self._program is not None:
            return self._program
        reaper = self._reaper()
        if reaper is None:
            return None
        deadline = time.monotonic() + FIND_DEADLINE
        while True:
            found = children_of(reaper)
            if found:
                pid = found[0]
                break
            if not is_running(reaper) or time.monotonic() > deadline:
                return None
            time.sleep(0.001)
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = None
        # The PID was read before the pidfd was taken: it is the program only if it is still
        # the reaper's child (a PID is not recycled while its parent has not reaped it).
        if pid not in children_of(reaper):
            if pidfd is not None:
                os.close(pidfd)
            return None
        self._program, self._pidfd = pid, pidfd
        return pid

    def deliver(self, signum: int, from_terminal: bool) -> None:
        """Send ``signum`` on: to the program's process group when the terminal generated it,
        to the program alone when a process sent it to python-sb."""

        pid = self.program()
        if pid is None:
            return
        try:  # noqa: SIM105 (contextlib costs start-up time here)
            self._send(pid, signum, from_terminal)
        except (ProcessLookupError, PermissionError):
            pass  # the program has ended

    def _send(self, pid: int, signum: int, from_terminal: bool) -> None:
        """Check the pidfd (raises ProcessLookupError once the program has ended), then send."""

        if self._pidfd is not None:
            # Still the same process? (raises ProcessLookupError once it has ended)
            signal.pidfd_send_signal(self._pidfd, 0)
        if from_terminal:
            group = os.getpgid(pid)
            # The session bubblewrap's --new-session made (its reaper leads it, and ignores
            # signals it has no handler for); never bubblewrap's own group or python-sb's.
            if group not in (self._bwrap, os.getpgrp()):
                os.killpg(group, signum)
                return
        if self._pidfd is not None:
            signal.pidfd_send_signal(self._pidfd, signum)
        else:
            os.kill(pid, signum)

    def close(self) -> None:
        """Release the descriptors (idempotent)."""

        if self.info_fd >= 0:
            os.close(self.info_fd)
            self.info_fd = -1
        for fd in (self._read, self._pidfd):
            if fd is not None and fd >= 0:
                try:  # noqa: SIM105 (contextlib costs start-up time here)
                    os.close(fd)
                except OSError:
                    pass
        self._read, self._pidfd = -1, None
