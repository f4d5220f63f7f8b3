"""The descriptor through which the run description reaches the child (``launch/wire.py`` says
what it holds; this module says how it crosses), chosen by capability (issue 19):

- **memfd** (Linux, FreeBSD): an anonymous file holding the bytes; the child reads it from
  offset 0. Nothing on disk, nothing to wait for.
- **pipe** (macOS and every POSIX system without memfd): the child inherits the read end and
  reads to end of file. Before ``exec`` python-sb writes what the pipe holds without blocking;
  a description larger than the pipe's buffer is finished by a small writer process (forked
  twice, so that the program never sees it as its child), which ends when the child has read
  everything or closed the pipe.
- **pipe handle** (Windows, where python-sb spawns the program and stays as its parent): the
  child inherits the read end as a handle (``handle_list``); python-sb writes the whole
  description once the child runs.

Never a named file: nothing on disk holds the policy, which no other process of the user can
open by its name.
"""

from __future__ import annotations

import os
import sys

from pysandboxes.platform_caps import CAPS


class Channel:
    """One hand-over: ``fd`` (POSIX) or ``handle`` (Windows) for the child to inherit,
    ``token`` for the bootstrap (``child.open_channel`` turns it back into a descriptor)."""

    def __init__(self, data: bytes, *, spawn: bool) -> None:
        """``spawn``: python-sb starts the child and stays (``subprocess``), rather than
        ``exec``-ing it; the pipe is then written after the start (:meth:`after_spawn`)."""

        self.kind = "memfd" if CAPS.memfd else "pipe"
        self._rest = memoryview(data)
        self._write_fd = -1
        self.handle = -1
        if CAPS.memfd:
            self.fd = _memfd(data)
            self._rest = memoryview(b"")
        else:
            self.fd, self._write_fd = os.pipe()
            if not spawn:
                self._fill_without_blocking()
        if CAPS.posix_signals:
            os.set_inheritable(self.fd, True)
            self.token: int | str = self.fd
        else:
            self.handle = _inheritable_handle(self.fd)
            self.token = f"h{self.handle}"

    def _fill_without_blocking(self) -> None:
        if sys.platform == "win32":  # for type checkers: no exec there, so never called
            raise OSError("a pipe is written before exec on POSIX only")
        os.set_blocking(self._write_fd, False)
        try:
            while self._rest:
                written = os.write(self._write_fd, self._rest)
                self._rest = self._rest[written:]
        except BlockingIOError:
            pass
        os.set_blocking(self._write_fd, True)

    def before_exec(self) -> None:
        """Just before ``exec``: what is left is written by a writer process; the write end
        is closed here (it is close-on-exec anyway)."""

        if self._write_fd < 0:
            return
        if self._rest:
            _start_writer(self._write_fd, bytes(self._rest))
            self._rest = memoryview(b"")
        os.close(self._write_fd)
        self._write_fd = -1

    def after_spawn(self) -> None:
        """Once the child runs (python-sb stays as its parent): write what is left, then close
        both ends on python-sb's side. A child that ended without reading is not an error
        here: its exit status says what happened."""

        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self._write_fd < 0:
            return
        try:
            while self._rest:
                written = os.write(self._write_fd, self._rest)
                self._rest = self._rest[written:]
        except (BrokenPipeError, OSError):
            pass
        finally:
            os.close(self._write_fd)
            self._write_fd = -1

    def close(self) -> None:
        """Release every descriptor still held (a launch that fails before the start)."""

        for fd in (self.fd, self._write_fd):
            if fd >= 0:
                try:  # noqa: SIM105 (contextlib costs start-up time)
                    os.close(fd)
                except OSError:
                    pass
        self.fd = self._write_fd = -1


def _memfd(data: bytes) -> int:
    fd: int = os.memfd_create("pysandboxes-run", os.MFD_CLOEXEC)  # type: ignore[attr-defined,unused-ignore]
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    return fd


def _inheritable_handle(fd: int) -> int:
    """The Windows handle of ``fd``, made inheritable (the child gets it by ``handle_list``)."""

    if sys.platform == "win32":  # the type checker's narrowing; chosen by CAPS.posix_signals
        import msvcrt

        handle = msvcrt.get_osfhandle(fd)
        os.set_handle_inheritable(handle, True)
        return handle
    raise OSError("inheritable handles exist on Windows only")


def _start_writer(write_fd: int, rest: bytes) -> None:
    """Fork a writer that sends ``rest`` into the pipe and ends (see the module docstring).

    Forked twice: the intermediate process exits at once and is reaped here, so the writer
    is nobody's child once python-sb has become the program (a program's ``os.wait()`` never
    meets it). The writer keeps only the pipe's write end: no standard stream of the run stays
    open in it."""

    if not CAPS.fork or sys.platform == "win32":  # (the latter for type checkers)
        raise OSError("the run description is larger than a pipe holds and fork is missing")
    first = os.fork()
    if first:
        os.waitpid(first, 0)
        return
    try:
        if os.fork():
            os._exit(0)
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for target in (0, 1, 2):
            os.dup2(null, target)
        os.closerange(3, write_fd)  # the read end and the run's other descriptors too
        os.closerange(write_fd + 1, 65536)
        view = memoryview(rest)
        while view:
            view = view[os.write(write_fd, view) :]
    except BaseException:
        os._exit(1)
    os._exit(0)
