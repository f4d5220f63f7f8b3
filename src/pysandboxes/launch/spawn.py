"""The one routine that turns a provider's :class:`~pysandboxes.providers.base.Prepared` into
the sandboxed process, and the one end of it (issue 24: there were three copies).

- ``launch.start.become``: *this* process becomes the sandboxed interpreter: the provider's
  ``pre_exec`` steps (Landlock, seccomp, ``no_new_privs``, a namespace), the hand-over
  channel's last write, ``execve``. The command line's usual path (DESIGN decision 4: nothing
  stays behind), and the forked child of every other path; it lives in ``start.py`` so that
  the exec path loads no module more.
- :func:`start`: a child process that does ``become``: ``fork`` where there is one, else
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

A worker's processes end with it (issue 25: a ``setsid`` daemon started by a sandboxed
function must not outlive the call's timeout nor the end of the ``with`` block). The provider
does it when it runs the program in a PID namespace of its own or a VM (``bwrap``,
``unshare``, ``qemu``: ``Provider.contains_processes``); otherwise :func:`tree_mechanism`
chooses, and :func:`start` applies, the strongest this machine offers without privileges:

- ``pid-namespace`` (where unprivileged user namespaces work): the child makes a user and a
  PID namespace (its own uid and gid mapped to themselves) whose PID 1, a small init that dies
  with the child (``PR_SET_PDEATHSIG``), forks the worker; when the worker ends, or the child
  is killed, PID 1 ends and the kernel kills every process of the namespace, ``setsid`` or
  not;
- ``subreaper`` (Linux without them): the child is a child subreaper
  (``PR_SET_CHILD_SUBREAPER``) and forks the worker; every process the worker leaves behind
  becomes the subreaper's child, and when the worker ends or the caller asks (SIGTERM) the
  subreaper kills them, round after round, until none is left. Killing the subreaper itself
  with SIGKILL would let them go: python-sb sends it SIGTERM (:meth:`Process.kill`);
- ``process-group`` (elsewhere): the worker leads a session of its own and the whole group is
  killed; a process that leaves it (``setsid``) can outlive the worker, which the start
  announces.

``PYSANDBOXES_PROCESS_TREE=subreaper|process-group`` (tests only) forces a weaker one.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any, NoReturn

    from pysandboxes.providers.base import Prepared

__all__ = ["Process", "popen_options", "release", "start", "tree_mechanism"]

#: How a worker's processes end with it, strongest first (see the module docstring);
#: ``provider``: the provider's own PID namespace or VM.
TREES = ("provider", "pid-namespace", "subreaper", "process-group")

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000


def tree_mechanism(contains_processes: bool) -> str:
    """The mechanism that ends a worker's processes with it (one of :data:`TREES`):
    ``contains_processes`` says the provider does it itself."""

    if contains_processes:
        return "provider"
    from pysandboxes.platform_caps import CAPS

    forced = os.environ.get("PYSANDBOXES_PROCESS_TREE", "")  # a switch for tests only
    if sys.platform != "linux" or not CAPS.linux or not CAPS.fork or forced == "process-group":
        return "process-group"  # (sys.platform: for type checkers; CAPS.linux chooses)
    from pysandboxes.providers import _linux, _ns_probe  # bound now: used after the fork

    if forced != "subreaper" and _linux.supported() and not _ns_probe.pid_namespace_problem():
        return "pid-namespace"
    return "subreaper"


class Process:
    """A started child (see the module docstring); ``pid`` is python-sb's direct child (the
    provider's outer process: bubblewrap, unshare's init, the holder of a worker's PID
    namespace or its subreaper, or the interpreter itself); ``tree``: how the processes it
    starts end with it (:data:`TREES`; ``""``: nothing of the kind asked)."""

    def __init__(self, pid: int, tree: str = "") -> None:
        self.pid = pid
        self.tree = tree
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

    def kill(self, *, hard: bool = False) -> None:
        """End the child now, with every process it started (nothing when it was already
        reaped): SIGKILL, to its whole process group for ``process-group``; a subreaper is
        asked with SIGTERM (it kills the worker and sweeps its processes, which a SIGKILL of it
        would let go) unless ``hard``, the last resort of a subreaper that does not end."""

        if self.returncode is not None:
            return
        try:
            if self.tree == "process-group" and hasattr(os, "killpg"):
                os.killpg(self.pid, 9)
            else:
                os.kill(self.pid, 15 if self.tree == "subreaper" and not hard else 9)
        except ProcessLookupError:
            pass

    def sweep(self) -> None:
        """After the child ended: what is left of a ``process-group`` (the group's other
        members; the other mechanisms leave none)."""

        if self.tree == "process-group" and hasattr(os, "killpg"):
            try:  # noqa: SIM105
                os.killpg(self.pid, 9)
            except (ProcessLookupError, PermissionError):
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

    def kill(self, *, hard: bool = False) -> None:
        if self.popen.poll() is None:
            try:
                if self.tree == "process-group" and hasattr(os, "killpg"):
                    os.killpg(self.popen.pid, 9)
                else:
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
    tree: str = "",
) -> Process:
    """Start ``prepared`` as a child (see the module docstring).

    ``keep``: descriptors above 2 the child keeps besides ``prepared.pass_fds`` (every other
    one is closed, :func:`become`). ``quiet_stdio``: standard input from
    ``/dev/null`` and standard output to standard error (a worker: never the caller's stdout,
    a stdio MCP server's protocol channel). ``sigmask``: the signal mask the child restores
    (the supervisor blocks the signals it waits for). ``handle``: the Windows handle of the
    hand-over (``launch/channel.py``). ``what`` names the child in a start failure's message.
    ``tree``: how the processes the child starts end with it (:func:`tree_mechanism`).
    """

    from pysandboxes.platform_caps import CAPS

    if not CAPS.fork or sys.platform == "win32":  # (the latter: for type checkers)
        return _start_without_fork(prepared, keep, quiet_stdio, handle, tree)
    import _signal  # type: ignore[import-not-found,unused-ignore]  # (before the fork, as:)
    import _socket  # noqa: F401  (used by unshare's step: imported before the fork)
    import fcntl  # noqa: F401

    from pysandboxes.launch.start import become
    from pysandboxes.providers import descriptors  # noqa: F401  (used by become: imported now)

    syscall: Any = None
    if tree in ("pid-namespace", "subreaper"):
        from pysandboxes.providers._linux import syscall

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
            if tree == "process-group":
                os.setsid()
            elif syscall is not None:
                _hold_the_tree(tree, syscall, _signal)  # returns in the worker's process only
            become(prepared, keep=keep_fds)
        except BaseException as exc:
            try:
                os.write(2, f"python-sb: cannot start the sandboxed {what}: {exc}\n".encode())
            finally:
                os._exit(127)
    if devnull >= 0:
        os.close(devnull)
    return Process(pid, tree)


def _hold_the_tree(tree: str, syscall: Any, signals: Any) -> None:
    """In the forked child, before the worker's own steps: become the holder of the worker's
    processes (``pid-namespace`` or ``subreaper``, see the module docstring) and fork the
    worker, which returns from here; the holder never returns. Only ``os``, the C signal
    module and the bound ``syscall`` are used: a forked child of a threaded caller must not
    import.

    ``pid-namespace``: the holder makes the namespaces and forks their PID 1, a small init
    that forks the worker, reaps whatever ends in the namespace and, when the worker ends,
    hands its status to the holder (through a pipe: a PID 1 cannot die by a signal of its
    own) and ends, which ends every process left in the namespace. The worker is not the
    namespace's PID 1, which would ignore the signals it has no handler for (the eval
    worker's CPU limit, SIGXCPU)."""

    if sys.platform == "win32":  # for type checkers: chosen by tree_mechanism (CAPS.linux)
        raise OSError("a worker's processes are held this way on Linux only")

    # A terminal's Ctrl-C reaches the caller's whole process group: the caller decides (an
    # interrupted call kills the worker), never the holder; the worker inherits it ignored.
    signals.signal(signals.SIGINT, signals.SIG_IGN)
    if tree == "pid-namespace":
        uid, gid = os.getuid(), os.getgid()
        syscall("unshare", CLONE_NEWUSER | CLONE_NEWPID)
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1\n")):
            _write_proc(name, text)
        _write_proc("gid_map", f"{gid} {gid} 1\n")
        watched: set[int] = set()
    else:
        syscall("prctl", PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        watched = {signals.SIGTERM, signals.SIGCHLD}
    mask = signals.pthread_sigmask(signals.SIG_BLOCK, watched)
    alive_r, alive_w = os.pipe()
    status_r, status_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(alive_w)
        os.close(status_r)
        signals.pthread_sigmask(signals.SIG_SETMASK, mask)
        syscall("prctl", PR_SET_PDEATHSIG, 9, 0, 0, 0)
        # The holder ended before the line above (its end of the pipe is closed): end too.
        os.set_blocking(alive_r, False)
        try:
            if os.read(alive_r, 1) == b"":
                os._exit(1)
        except BlockingIOError:
            pass
        os.close(alive_r)
        if tree == "pid-namespace":
            _be_init(status_w)  # returns in the worker only
        os.close(status_w)
        return
    os.close(alive_r)
    os.close(status_w)
    keep = sorted((alive_w, status_r))
    os.closerange(3, keep[0])  # the worker's descriptors are the worker's alone: its socket's
    os.closerange(keep[0] + 1, keep[1])  # end of file is the caller's sign that it ended
    os.closerange(keep[1] + 1, 1 << 16)
    if tree == "subreaper":
        os.close(status_r)
        _reap_as_subreaper(child, watched, signals)
    data = b""
    while len(data) < 4:
        try:
            chunk = os.read(status_r, 4 - len(data))
        except InterruptedError:
            continue
        if not chunk:
            break
        data += chunk
    init_status = _wait_for(child)
    _end_like(int.from_bytes(data, "little") if len(data) == 4 else init_status, signals)


def _be_init(status_w: int) -> None:
    """PID 1 of a worker's namespace (see :func:`_hold_the_tree`): returns in the worker."""

    if sys.platform == "win32":  # for type checkers: chosen by tree_mechanism (CAPS.linux)
        raise OSError("a worker's processes are held this way on Linux only")

    worker = os.fork()
    if worker == 0:
        return  # (the caller closes status_w)
    os.closerange(3, status_w)
    os.closerange(status_w + 1, 1 << 16)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
        if pid == worker:
            os.write(status_w, status.to_bytes(4, "little"))
            os._exit(0)  # and with PID 1, every process left in the namespace


def _write_proc(name: str, text: str) -> None:
    if sys.platform == "win32":  # for type checkers: chosen by tree_mechanism (CAPS.linux)
        raise OSError("a worker's processes are held this way on Linux only")
    fd = os.open(f"/proc/self/{name}", os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _wait_for(pid: int) -> int:
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue


def _reap_as_subreaper(worker: int, watched: set[int], signals: Any) -> None:
    """The subreaper's loop: reap its children (the worker, and what the worker left, which
    the kernel hands to it); on SIGTERM kill the worker; once the worker has ended, kill and
    reap every process left, round after round (a killed process's own children come to the
    subreaper in turn), then end as the worker ended."""

    if sys.platform == "win32":  # for type checkers: chosen by tree_mechanism (CAPS.linux)
        raise OSError("a worker's processes are held this way on Linux only")

    status: int | None = None
    while status is None:
        info = signals.sigwaitinfo(watched)
        if info.si_signo == signals.SIGTERM:
            try:  # noqa: SIM105
                os.kill(worker, 9)
            except ProcessLookupError:
                pass
        while True:
            try:
                pid, wait_status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == worker:
                status = wait_status
    me = os.getpid()
    while True:
        children = _children(me)
        for child in children:
            try:  # noqa: SIM105
                os.kill(child, 9)
            except ProcessLookupError:
                pass
        for child in children:  # once reaped, its own children are the subreaper's
            try:  # noqa: SIM105
                os.waitpid(child, 0)
            except ChildProcessError:
                pass
        if not children:
            try:
                os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break  # none left (one not listed yet is there: the next round kills it)
    _end_like(status, signals)


def _children(pid: int) -> list[int]:
    """The children of ``pid`` (``/proc/PID/task/*/children``; a scan of ``/proc`` where the
    kernel does not keep that list)."""

    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        tasks = []
    listed = False
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                found += [int(word) for word in handle.read().split()]
            listed = True
        except OSError:
            continue
    if listed:
        return found
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rpartition(b")")[2].split()
            except OSError:
                continue
            if len(fields) > 1 and int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _end_like(status: int, signals: Any) -> NoReturn:
    """End the holder as the worker ended: its exit status, or death by its signal."""

    if sys.platform == "win32":  # for type checkers: chosen by tree_mechanism (CAPS.linux)
        raise OSError("a worker's processes are held this way on Linux only")

    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        signals.signal(signum, signals.SIG_DFL)
        signals.pthread_sigmask(signals.SIG_UNBLOCK, {signum})
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


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
    prepared: Prepared, keep: Sequence[int] | None, quiet_stdio: bool, handle: int, tree: str
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
    if tree and os.name == "posix":
        extra["start_new_session"] = True  # the process group that ends with it
    popen = subprocess.Popen(
        list(prepared.argv),
        executable=prepared.argv[0],
        env=dict(prepared.env),
        **popen_options(sorted(inherited), handle),
        **extra,
    )
    spawned = _Spawned(popen)
    spawned.tree = "process-group" if tree and os.name == "posix" else tree
    return spawned


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
