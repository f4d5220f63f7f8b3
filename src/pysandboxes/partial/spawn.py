"""Starting one worker: the command line's planning and start path, with the program kind
``worker`` (or ``eval-worker``).

:func:`plan_worker` turns the API's options (a rule file, keyword rules, ``learn=``) into the
:class:`~pysandboxes.launch.cli.RunPlan` the command line would have made (``plan_run``: rule
file, includes, variables, the lock, the mode); :func:`start_worker` hands it to the one start
path (``launch/start.py``: environment, temporary directory and its sweep, learning session,
the guard's policy with DENY names pinned, the hand-over channel, the provider's ``prepare``
and announcements, the spawn), with one end of a socketpair for the child to inherit.
Nothing of a start is written here: there is no second place to write it.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys

from pysandboxes.errors import ConfigError, ConfigProblem
from pysandboxes.launch import cli

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pysandboxes.launch.spawn import Process
    from pysandboxes.launch.start import Start
    from pysandboxes.partial.output import Relay


def plan_worker(
    rules: str | None,
    keyword_rules: dict[str, str | list[str]] | None,
    learn: str | bool | None,
    cwd: str,
    caller_file: str | None,
) -> cli.RunPlan:
    """The run plan of a worker (``ConfigError`` when the rules refuse it)."""

    from pysandboxes.launch.argv import CommandLine
    from pysandboxes.launch.start import learning_session_class

    cmd = CommandLine()
    cmd.config = rules
    if caller_file:
        cmd.kind, cmd.program = "script", caller_file
    else:
        cmd.kind = "code"
    for key, value in (keyword_rules or {}).items():
        values = value if isinstance(value, list | tuple) else [value]
        for item in values:
            cmd.rules.append((key.replace("_", "-"), str(item)))
    if learn is True:
        cmd.learn = ""
    elif isinstance(learn, str):
        cmd.learn = learn
    elif learn not in (None, False):
        raise ConfigError([ConfigProblem("<arg>", f"learn= must be a file or True: {learn!r}")])
    if learn not in (None, False):
        from pysandboxes.policy import check_lock, load_policy
        from pysandboxes.policy.locate import find_rule_file

        path = find_rule_file(cmd.config, cmd.kind, cmd.target, cwd)
        if os.path.isfile(path):
            policy = load_policy(path, cli_rules=[], environ=os.environ, cwd=cwd)
            check_lock(policy, learning_requested=True, rule_file_missing=False)
    plan = cli.plan_run(cmd, cwd)
    if plan.mode != "enforce" and learning_session_class() is None:
        raise ConfigError([ConfigProblem("<arg>", "learning mode is not available here")])
    return plan


class Started:
    """A spawned worker: its process, the parent's socket end, and its start (what to end)."""

    def __init__(
        self, start: Start, process: Process, sock: socket.socket, relay: Relay | None = None
    ) -> None:
        self.start = start
        self.process = process
        self.sock = sock
        #: The relay of the worker's output (``None``: ``raw_output``, it writes there itself).
        self.relay = relay
        #: Bytes read ahead from the socket (``pool.Worker._read_frame``).
        self.buffer = b""
        #: An incomplete frame that came in pieces (``pool.Worker._read_frame``), or ``None``.
        self.growing: bytearray | None = None

    @property
    def prepared(self) -> object:
        return self.start.prepared

    def kill(self) -> None:
        """End the worker now (SIGKILL): its process, and with it the sandbox around it."""

        self.start.kill()

    def finish(self) -> int | None:
        """Wait for the process and release everything (learning output written here)."""

        with contextlib.suppress(OSError):
            self.sock.close()
        status = self.process.wait(timeout=5)
        if status is None:
            self.kill()  # (a subreaper is asked first: it sweeps the worker's processes)
            status = self.process.wait(timeout=5)
        if status is None:
            self.process.kill(hard=True)
            status = self.process.wait()
        self.start.finish(status)
        if self.relay is not None:
            self.relay.finish()
        return status


def start_worker(
    plan: cli.RunPlan,
    *,
    threads: int,
    max_result: int,
    path0: str,
    kind: str = "worker",
    raw_output: bool = False,
) -> Started:
    """Spawn a worker for ``plan`` (see the module docstring); ``kind``: ``worker``, or
    ``eval-worker`` for guarded evaluation's. Its output comes back on a socket of its own,
    relayed with control sequences made harmless (``partial.output``), unless ``raw_output``
    (or on Windows, where a socket cannot be a standard stream): then it writes to the caller's
    standard error itself."""

    from pysandboxes.launch.start import Request, prepare

    out_parent = out_child = None
    # AF_UNIX on POSIX; socketpair's own default elsewhere (a loopback pair on Windows).
    if sys.platform == "win32":
        parent_end, child_end = socket.socketpair()
    else:
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        child_fd = child_end.fileno()
        os.set_inheritable(child_fd, True)
        keep = [child_fd]
        fields = {"argv0": "-c", "worker_fd": str(child_fd)}
        if not raw_output and sys.platform != "win32":
            out_parent, out_child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            out_child.shutdown(socket.SHUT_RD)
            os.set_inheritable(out_child.fileno(), True)
            keep.append(out_child.fileno())
            fields["output_fd"] = str(out_child.fileno())
        request = Request(
            kind,
            path0,
            fields={**fields, "threads": str(threads), "max_result": str(max_result)},
            keep_fds=tuple(keep),
        )
        start = prepare(plan, request)
        try:
            process = start.spawn()
        except BaseException:
            start.abandon()
            raise
    except BaseException:
        parent_end.close()
        if out_parent is not None:
            out_parent.close()
        raise
    finally:
        child_end.close()
        if out_child is not None:
            out_child.close()
    relay = None
    if out_parent is not None:
        from pysandboxes.partial.output import Relay

        relay = Relay(out_parent)
    return Started(start, process, parent_end, relay)
