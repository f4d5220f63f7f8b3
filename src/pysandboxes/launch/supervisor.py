"""python-sb as a parent, for the runs that need one (DESIGN decision 4).

Most runs ``exec`` the sandboxed interpreter. A parent stays only when something must happen
after the program ends or beside it: learning and audit output, a provider's network helper or
VM (``Prepared.needs_parent``). The supervisor then:

- spawns the child (``launch/spawn.py``: ``fork`` + the provider's ``pre_exec`` callables +
  ``execve``, or ``subprocess`` where there is no fork);
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
    The child is started by ``launch/spawn.py`` (fork, or ``subprocess`` where there is no
    fork: Windows, ``PYSANDBOXES_PORTABLE=spawn``); the end is ``spawn.release``.
    """

    from pysandboxes.launch import spawn
    from pysandboxes.platform_caps import CAPS

    if not CAPS.fork or not CAPS.posix_signals:
        return _supervise_without_fork(prepared, on_start, on_exit, channel)
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
        process = spawn.start(prepared, sigmask=old_mask)
        pid = process.pid
        child.append(pid)
        if channel is not None:
            channel.after_spawn()
        if relay is not None:
            relay.started(pid)
        if on_start is not None:
            on_start()
        if portable:
            status = process.wait()  # the handlers run while it waits (PEP 475)
        while status is None:
            info = signal.sigwaitinfo(watched)  # type: ignore[attr-defined,unused-ignore]
            if info.si_signo == signal.SIGCHLD:
                status = process.poll()
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
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        spawn.release(prepared, on_exit, status)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    if status is not None and status < 0:
        die_by_signal(-status)
    return status if status is not None else 1


def _supervise_without_fork(
    prepared: Prepared,
    on_start: Callable[[], None] | None,
    on_exit: Sequence[Callable[[int | None], None]],
    channel: Any,
) -> int:
    """Where ``fork`` and a replacing ``exec`` are missing (Windows; ``PYSANDBOXES_PORTABLE=
    spawn`` forces it on Linux, for tests): the program is started with ``subprocess`` and
    python-sb waits (issue 19).

    - The hand-over's read end crosses as an inherited descriptor (POSIX, ``pass_fds``) or
      handle (Windows, ``handle_list``: only that handle is inherited); it is written once the
      child runs.
    - Signals: SIGINT, SIGTERM and SIGHUP sent to python-sb are passed on where POSIX signals
      exist, except a SIGINT or SIGHUP while python-sb is in its terminal's foreground process
      group (the terminal sent it to the program too: :func:`terminal_sent_it`). On Windows a
      console's Ctrl-C reaches every process of the console: python-sb ignores it and waits.
    - A provider whose ``pre_exec`` steps must run between ``fork`` and ``exec`` cannot be
      started this way: only ``subprocess`` (and learning, audit) come here, which have none.
    """

    import signal as signals  # the module with its handlers' API, on every platform

    from pysandboxes.launch import spawn
    from pysandboxes.platform_caps import CAPS

    if prepared.pre_exec:
        raise OSError("this provider needs fork, which this platform does not have")
    handle = -1 if channel is None else channel.handle
    status: int | None = None
    process: list[Any] = []

    def forward(signum: int, _frame: object) -> None:
        if not process or not CAPS.posix_signals or terminal_sent_it(signum):
            return  # the terminal (Windows: the console) sent it to the program as well
        try:  # noqa: SIM105
            process[0].send_signal(signum)
        except OSError:
            pass

    previous = {signum: signals.signal(signum, forward) for signum in FORWARDED}
    try:
        process.append(spawn.start(prepared, handle=handle))
        if channel is not None:
            channel.after_spawn()
        if on_start is not None:
            on_start()
        status = process[0].wait()
    finally:
        for signum, handler in previous.items():
            signals.signal(signum, handler)
        spawn.release(prepared, on_exit, status)
        if channel is not None:
            channel.close()
    if status is not None and status < 0 and CAPS.posix_signals:
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
