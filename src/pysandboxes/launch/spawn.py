"""The one routine that turns a provider's :class:`~pysandboxes.providers.base.Prepared` into
the sandboxed process, and the one end of it (issue 24: there were three copies).

- :func:`become`: *this* process becomes the sandboxed interpreter: the provider's ``pre_exec``
  steps (Landlock, seccomp, ``no_new_privs``, a namespace), the hand-over channel's last write,
  ``execve``. The command line's usual path (DESIGN decision 4: nothing stays behind), and the
  forked child of every other path.
- :func:`start`: a child process that does :func:`become`: ``fork`` where there is one, else
  ``subprocess`` (Windows; ``PYSANDBOXES_PORTABLE=spawn``), which only a provider without
  ``pre_exec`` steps can use. Not ``subprocess.Popen(preexec_fn=...)`` where there is ``fork``:
  a provider's step may never return in the process it runs in (``unshare`` makes it the
  sandbox's outer process, which waits for the program), and Popen would wait for that process
  to exec. Between fork and exec the child only restores the signal mask, sets its standard
  streams and descriptors, applies the steps and execs; the modules the steps use are imported
  before the fork (a forked child of a threaded program must not take the import lock).
- :class:`Process`: the child's few ``subprocess.Popen``-like methods (``poll``, ``wait``,
  ``kill``, ``returncode``: the exit status, or minus the signal that ended it).
- :func:`release`: the end of a run, on every exit path: the relay closed, the entry point's
  ``on_exit`` callbacks (a learning session's ``finish``, the temporary directory's removal),
  then the provider's ``cleanup``; a problem in one is said on stderr and does not stop the
  others.

Where POSIX has ``fork``, the supervisor (``launch/supervisor.py``) and partial mode's workers
(``partial/spawn.py``) both start their child here, through ``launch/start.py``.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any, NoReturn

    from pysandboxes.providers.base import Prepared

__all__ = ["Process", "become", "popen_options", "release", "start"]


def become(prepared: Prepared, channel: Any = None, keep: Sequence[int] = ()) -> NoReturn:
    """Finish the hand-over (``channel.before_exec``), close every descriptor above 2 but
    ``prepared.pass_fds`` and ``keep`` (issue 23: what python-sb inherited from its caller
    stays out of the sandbox, ``providers/descriptors.py``), apply ``prepared``'s ``pre_exec``
    steps in this process and exec the sandboxed command. Raises (``OSError``,
    ``ConfigError``) when a step or the exec fails: nothing has run then."""

    from pysandboxes.providers.descriptors import close_inherited

    if channel is not None:
        channel.before_exec()  # a pipe's writer (no memfd): before its write end is closed
    close_inherited((*prepared.pass_fds, *keep))
    for step in prepared.pre_exec:
        step()
    os.execve(prepared.argv[0], prepared.argv, prepared.env)
    raise AssertionError("unreachable")  # execve returns only by raising


class Process:
    """A started child (see the module docstring); ``pid`` is python-sb's direct child (the
    provider's outer process: bubblewrap, unshare's init, or the interpreter itself)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        import _thread

        self._lock = _thread.allocate_lock()

    def poll(self) -> int | None:
        return self._reap(_WNOHANG)

    def wait(self, timeout: float | None = None) -> int | None:
        """The status (minus the signal number when killed); ``None`` after ``timeout``."""

        if timeout is None:
            return self._reap(0)
        import time

        end = time.monotonic() + timeout
        while True:
            status = self._reap(_WNOHANG)
            if status is not None or time.monotonic() >= end:
                return status
            time.sleep(0.005)

    def _reap(self, flags: int) -> int | None:
        if sys.platform == "win32":  # for type checkers: a Process wraps a forked child only
            raise OSError("no fork on Windows")
        with self._lock:
            if self.returncode is not None:
                return self.returncode
            try:
                pid, status = os.waitpid(self.pid, flags)
            except ChildProcessError:
                self.returncode = -1
                return self.returncode
            if pid == 0:
                return None
            self.returncode = os.waitstatus_to_exitcode(status)
            return self.returncode

    def kill(self) -> None:
        """SIGKILL the child (nothing when it was already reaped)."""

        if self.returncode is None:
            try:  # noqa: SIM105 (contextlib costs start-up time)
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass


_WNOHANG = getattr(os, "WNOHANG", 1)


class _Spawned(Process):
    """A child started by ``subprocess`` where there is no ``fork`` (``CAPS.fork``)."""

    def __init__(self, popen: Any) -> None:
        super().__init__(popen.pid)
        self.popen = popen

    def poll(self) -> int | None:
        self.returncode = self.popen.poll()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        import subprocess

        try:
            self.returncode = self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        return self.returncode

    def kill(self) -> None:
        if self.popen.poll() is None:
            try:  # noqa: SIM105
                self.popen.kill()
            except OSError:
                pass

    def send_signal(self, signum: int) -> None:
        self.popen.send_signal(signum)


def start(
    prepared: Prepared,
    *,
    what: str = "program",
    keep: Sequence[int] | None = None,
    quiet_stdio: bool = False,
    sigmask: Iterable[int] | None = None,
    handle: int = -1,
) -> Process:
    """Start ``prepared`` as a child (see the module docstring).

    ``keep``: descriptors above 2 the child keeps besides ``prepared.pass_fds`` (every other
    one is closed, :func:`become`). ``quiet_stdio``: standard input from
    ``/dev/null`` and standard output to standard error (a worker: never the caller's stdout,
    a stdio MCP server's protocol channel). ``sigmask``: the signal mask the child restores
    (the supervisor blocks the signals it waits for). ``handle``: the Windows handle of the
    hand-over (``launch/channel.py``). ``what`` names the child in a start failure's message.
    """

    from pysandboxes.platform_caps import CAPS

    if not CAPS.fork or sys.platform == "win32":  # (the latter: for type checkers)
        return _start_without_fork(prepared, keep, quiet_stdio, handle)
    import _socket  # noqa: F401  (used by unshare's step: imported before the fork)
    import fcntl  # noqa: F401

    from pysandboxes.providers import descriptors  # noqa: F401  (used by become: imported now)

    keep_fds = tuple(keep or ())
    devnull = os.open(os.devnull, os.O_RDONLY) if quiet_stdio else -1
    try:
        pid = os.fork()
    except BaseException:
        if devnull >= 0:
            os.close(devnull)
        raise
    if pid == 0:
        try:
            if sigmask is not None:
                import _signal  # type: ignore[import-not-found,unused-ignore]

                _signal.pthread_sigmask(_signal.SIG_SETMASK, sigmask)
            if devnull >= 0:
                os.dup2(devnull, 0)
                os.dup2(2, 1)
            become(prepared, keep=keep_fds)
        except BaseException as exc:
            try:
                os.write(2, f"python-sb: cannot start the sandboxed {what}: {exc}\n".encode())
            finally:
                os._exit(127)
    if devnull >= 0:
        os.close(devnull)
    return Process(pid)


def popen_options(pass_fds: Sequence[int], handle: int) -> dict[str, Any]:
    """``subprocess.Popen`` keywords that make the child inherit ``pass_fds`` (POSIX) or the
    one Windows ``handle`` (when ``handle >= 0``), and nothing else."""

    if handle >= 0 and sys.platform == "win32":
        import subprocess

        info = subprocess.STARTUPINFO()
        info.lpAttributeList = {"handle_list": [handle]}
        return {"close_fds": True, "startupinfo": info}
    return {"close_fds": True, "pass_fds": tuple(pass_fds) if os.name == "posix" else ()}


def _start_without_fork(
    prepared: Prepared, keep: Sequence[int] | None, quiet_stdio: bool, handle: int
) -> Process:
    """``subprocess.Popen`` where ``fork`` is missing (the ``spawn`` profile of the test
    switch; Windows' process start): only a provider without ``pre_exec`` steps (``subprocess``,
    and learning and audit runs: the kernel providers are Linux's, which has fork)."""

    import subprocess

    if prepared.pre_exec:
        from pysandboxes.errors import ConfigProblem, ProviderUnavailableError

        raise ProviderUnavailableError(
            [ConfigProblem("provider", "its start-up steps need fork, missing on this platform")]
        )
    inherited = {fd for fd in (*(keep or ()), *prepared.pass_fds) if fd > 2}
    extra: dict[str, Any] = {}
    if quiet_stdio:
        # Never the caller's stdout (a stdio MCP server's protocol channel).
        extra = {"stdin": subprocess.DEVNULL, "stdout": 2}
    popen = subprocess.Popen(
        list(prepared.argv),
        executable=prepared.argv[0],
        env=dict(prepared.env),
        **popen_options(sorted(inherited), handle),
        **extra,
    )
    return _Spawned(popen)


def release(
    prepared: Prepared, on_exit: Sequence[Callable[[int | None], None]], status: int | None
) -> None:
    """The end of a run on every exit path (see the module docstring)."""

    if prepared.relay is not None:
        try:
            prepared.relay.close()
        except Exception as exc:
            sys.stderr.write(f"python-sb: cleanup: {type(exc).__name__}: {exc}\n")
    for callback in on_exit:
        try:
            callback(status)
        except Exception as exc:  # the program's status must survive a cleanup problem
            sys.stderr.write(f"python-sb: during exit: {type(exc).__name__}: {exc}\n")
    for cleanup in prepared.cleanup:
        try:
            cleanup()
        except Exception as exc:
            sys.stderr.write(f"python-sb: cleanup: {type(exc).__name__}: {exc}\n")
