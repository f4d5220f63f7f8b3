"""python-sb as the program's parent where ``fork`` and a replacing ``exec`` are missing
(Windows; ``PYSANDBOXES_PORTABLE=spawn`` forces it on Linux, for tests): the program is started
with ``subprocess`` and python-sb waits for it (issue 19).

- The hand-over's read end crosses as an inherited descriptor (POSIX, ``pass_fds``) or handle
  (Windows, ``handle_list``: only that handle is inherited); it is written once the child runs.
- Signals: SIGINT, SIGTERM and SIGHUP sent to python-sb are passed on where POSIX signals exist,
  except a SIGINT or SIGHUP while python-sb is in its terminal's foreground process group (the
  terminal sent it to the program too: ``supervisor.terminal_sent_it``). On Windows a console's
  Ctrl-C reaches every process of the console: python-sb ignores it and waits for the program.
- Exit: the program's status; a program killed by a signal kills python-sb with the same one
  where POSIX signals exist.
- A provider whose ``pre_exec`` steps must run between ``fork`` and ``exec`` cannot be started
  this way: only ``subprocess`` (and learning, audit) come here, which have none.
"""

from __future__ import annotations

import sys

from pysandboxes.platform_caps import CAPS
from pysandboxes.providers.base import Prepared

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any


def popen_options(pass_fds: Sequence[int], handle: int) -> dict[str, Any]:
    """``subprocess.Popen`` keywords that make the child inherit ``pass_fds`` (POSIX) or the
    one Windows ``handle`` (when ``handle >= 0``), and nothing else."""

    if handle >= 0 and sys.platform == "win32":  # CAPS.posix_signals is False there
        import subprocess

        info = subprocess.STARTUPINFO()
        info.lpAttributeList = {"handle_list": [handle]}
        return {"close_fds": True, "startupinfo": info}
    return {"close_fds": True, "pass_fds": tuple(pass_fds)}


def supervise_spawned(
    prepared: Prepared,
    *,
    on_start: Callable[[], None] | None = None,
    on_exit: Sequence[Callable[[int | None], None]] = (),
    channel: Any = None,
) -> int:
    """Start ``prepared`` with ``subprocess``, wait, run ``on_exit`` and the cleanups; the
    program's exit status (python-sb dies by the program's signal where it has signals)."""

    import signal
    import subprocess

    from pysandboxes.launch.supervisor import FORWARDED, die_by_signal, terminal_sent_it

    if prepared.pre_exec:
        raise OSError("this provider needs fork, which this platform does not have")
    handle = -1 if channel is None else channel.handle
    status: int | None = None
    process: list[subprocess.Popen[bytes]] = []

    def forward(signum: int, _frame: object) -> None:
        if not process or not CAPS.posix_signals or terminal_sent_it(signum):
            return  # the terminal (Windows: the console) sent it to the program as well
        try:  # noqa: SIM105
            process[0].send_signal(signum)
        except OSError:
            pass

    previous = {signum: signal.signal(signum, forward) for signum in FORWARDED}
    try:
        process.append(
            subprocess.Popen(
                prepared.argv,
                executable=prepared.argv[0],
                env=prepared.env,
                **popen_options(prepared.pass_fds, handle),
            )
        )
        if channel is not None:
            channel.after_spawn()
        if on_start is not None:
            on_start()
        status = process[0].wait()
    finally:
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
        if channel is not None:
            channel.close()
    if status is not None and status < 0 and CAPS.posix_signals:
        die_by_signal(-status)
    return status if status is not None else 1


__all__ = ["popen_options", "supervise_spawned"]
