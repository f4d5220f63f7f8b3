"""python-sb as a parent, for the runs that need one (DESIGN decision 4).

Most runs ``exec`` the sandboxed interpreter. A parent stays only when something must happen
after the program ends or beside it: learning and audit output, a provider's network helper or
VM (``Prepared.needs_parent``). The supervisor then:

- spawns the child (``fork`` + the provider's ``pre_exec`` callables + ``execve``);
- forwards SIGINT, SIGTERM and SIGHUP *sent to python-sb* to the child. A signal the terminal
  sends (Ctrl-C, hang-up) already reaches the whole foreground process group, child included, so
  it is not sent a second time: signals are taken synchronously with ``sigwaitinfo`` and only
  those whose ``si_code`` says a process sent them are forwarded;
- or, when the provider gives a ``relay`` (bubblewrap, which passes no signal on and puts the
  program out of the terminal's reach), hands every watched signal to it, saying whether the
  terminal or a process sent it;
- waits, runs the cleanups and the ``on_exit`` callback (the learning session's ``finish``) on
  every exit path;
- ends like the child: the same exit status, or death by the same signal.
"""

from __future__ import annotations

import os
import sys

from pysandboxes.providers.base import Prepared
from pysandboxes.providers.descriptors import close_inherited

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    import signal
else:  # the C module, same names with plain ints: ``signal`` imports ``enum`` (~3 ms)
    import _signal as signal
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

#: SIGINT, SIGTERM and SIGHUP (the last is POSIX's only).
FORWARDED = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))
#: ``si_code`` values of a signal sent by a process (kill, sigqueue, tkill).
_SENT_BY_PROCESS = {0, -1, -6}  # SI_USER, SI_QUEUE, SI_TKILL


#: ``si_code`` of a signal the kernel generated itself (a terminal's Ctrl-C, hang-up).
SI_KERNEL = 0x80


def should_forward(si_code: int, si_pid: int, child: int) -> bool:
    """Forward a signal to the child only when a process sent it to python-sb (``kill``), not the
    child itself; a terminal's signal (``SI_KERNEL``) already reached the child's process group.
    """

    return si_code in _SENT_BY_PROCESS and si_pid != child


def _spawn(prepared: Prepared, old_mask: set[int | signal.Signals]) -> int:
    if sys.platform == "win32":  # for type checkers: only called where CAPS.fork
        raise OSError("fork is missing")
    pid = os.fork()
    if pid:
        return pid
    # The child: restore the signal mask, apply the provider, exec. (exec itself resets the
    # signals python-sb handles to their default and keeps the ignored ones ignored, as a shell
    # would have started the program.)
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        close_inherited(prepared.pass_fds)  # what python-sb inherited stays out of the sandbox
        for step in prepared.pre_exec:
            step()
        os.execve(prepared.argv[0], prepared.argv, prepared.env)
    except BaseException as exc:
        try:
            os.write(2, f"python-sb: cannot start the sandboxed program: {exc}\n".encode())
        finally:
            os._exit(127)
    raise AssertionError("unreachable")


def terminal_sent_it(signum: int) -> bool:
    """For the handler path (no ``sigwaitinfo``): whether ``signum`` most likely came from the
    terminal, which sends SIGINT (Ctrl-C) and SIGHUP (hang-up) to its whole foreground process
    group, the program included: true for those two when python-sb is in the foreground group
    of its terminal. Such a signal is not sent a second time; a ``kill -INT`` of python-sb
    itself while it is in the foreground is then not passed on either (use SIGTERM)."""

    if signum != signal.SIGINT and signum != getattr(signal, "SIGHUP", None):
        return False
    if sys.platform == "win32":  # for type checkers: this path runs where CAPS.posix_signals
        return False
    group = os.getpgrp()
    for fd in (0, 1, 2):
        try:
            if os.isatty(fd) and os.tcgetpgrp(fd) == group:
                return True
        except OSError:
            continue
    return False


def _forward_with_handlers(child: list[int], prepared: Prepared) -> dict[int, Any]:
    """Install handlers that send SIGINT/SIGTERM/SIGHUP on to the child (``child[0]`` once it
    exists), or hand the relay's signals to it; the previous handlers, to put back. Exec resets
    them in the child itself."""

    relay = prepared.relay

    def forward(signum: int, _frame: object) -> None:
        if not child:
            return
        if relay is not None:
            relay.deliver(signum, False)  # a handler cannot tell the terminal from a kill
            return
        if terminal_sent_it(signum):
            return  # the program got it from the terminal too
        try:  # noqa: SIM105 (contextlib costs start-up time here)
            os.kill(child[0], signum)
        except ProcessLookupError:
            pass

    signals = FORWARDED if relay is None else relay.signals
    return {signum: signal.signal(signum, forward) for signum in signals}


def _status(wait_status: int) -> int:
    """``subprocess``-style status: the exit code, or minus the signal number."""

    if sys.platform == "win32":  # for type checkers: only called where CAPS.fork
        raise OSError("fork is missing")
    if os.WIFSIGNALED(wait_status):
        return -os.WTERMSIG(wait_status)
    return os.waitstatus_to_exitcode(wait_status)


def supervise(
    prepared: Prepared,
    *,
    on_start: Callable[[], None] | None = None,
    on_exit: Sequence[Callable[[int | None], None]] = (),
    portable: bool | None = None,
    channel: Any = None,
) -> int:
    """Run ``prepared`` as a child and return python-sb's exit status (never returns when the
    child died by a signal: python-sb then dies by the same signal, after every cleanup).

    ``portable`` (default: where ``signal.sigwaitinfo`` is missing, as on macOS) waits with
    signal handlers instead; they cannot see who sent a signal, so SIGTERM is always forwarded
    and SIGINT/SIGHUP unless python-sb is in its terminal's foreground process group
    (:func:`terminal_sent_it`).

    ``channel`` (``launch.channel.Channel``): the hand-over, written once the child runs.
    Without ``fork`` (Windows, ``PYSANDBOXES_PORTABLE=spawn``) the child is started with
    ``subprocess`` instead (:mod:`pysandboxes.launch.spawn`).
    """

    from pysandboxes.platform_caps import CAPS

    if not CAPS.fork or not CAPS.posix_signals:
        from pysandboxes.launch.spawn import supervise_spawned

        return supervise_spawned(prepared, on_start=on_start, on_exit=on_exit, channel=channel)
    if sys.platform == "win32":  # for type checkers: CAPS.fork is False there
        raise OSError("fork is missing")
    if portable is None:
        portable = not CAPS.sigwaitinfo
    relay = prepared.relay
    forwarded = FORWARDED if relay is None else relay.signals
    watched = set() if portable else {*forwarded, signal.SIGCHLD}
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    status: int | None = None
    child: list[int] = []
    previous = _forward_with_handlers(child, prepared) if portable else {}
    try:
        pid = _spawn(prepared, old_mask)
        child.append(pid)
        if channel is not None:
            channel.after_spawn()
        if relay is not None:
            relay.started(pid)
        if on_start is not None:
            on_start()
        if portable:
            _, wait_status = os.waitpid(pid, 0)  # the handlers run while it waits (PEP 475)
            status = _status(wait_status)
        while status is None:
            info = signal.sigwaitinfo(watched)  # type: ignore[attr-defined,unused-ignore]
            if info.si_signo == signal.SIGCHLD:
                done, wait_status = os.waitpid(pid, os.WNOHANG)
                if done == pid:
                    status = _status(wait_status)
            elif relay is not None:
                try:
                    relay.deliver(info.si_signo, info.si_code not in _SENT_BY_PROCESS)
                except OSError as exc:  # the program's end is still awaited and reported
                    sys.stderr.write(f"python-sb: cannot pass signal {info.si_signo} on: {exc}\n")
            elif should_forward(info.si_code, info.si_pid, pid):
                try:  # noqa: SIM105 (contextlib costs start-up time here)
                    os.kill(pid, info.si_signo)
                except ProcessLookupError:
                    pass
    finally:
        if relay is not None:
            relay.close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
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
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    if status is not None and status < 0:
        die_by_signal(-status)
    return status if status is not None else 1


def die_by_signal(signum: int) -> None:
    """End python-sb by ``signum``, as the child ended (no core file of the supervisor)."""

    sys.stdout.flush()
    sys.stderr.flush()
    from pysandboxes.platform_caps import CAPS

    if not CAPS.posix_signals or sys.platform == "win32":  # (the latter: for type checkers)
        # What CPython ends with after an uncaught KeyboardInterrupt on Windows.
        os._exit(-1073741510 if signum == signal.SIGINT else 128 + signum)  # STATUS_CONTROL_C_EXIT
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, OSError, ValueError):
        pass
    if signum not in (signal.SIGKILL, signal.SIGSTOP):  # those two cannot be caught anyway
        signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
    os.kill(os.getpid(), signum)
    # A signal that does not end the process by default (SIGCHLD, SIGCONT...): exit like a shell.
    os._exit(128 + signum)
