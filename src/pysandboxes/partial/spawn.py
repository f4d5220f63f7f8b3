"""Starting one worker: the same planning, provider and child as a ``python-sb`` run.

:func:`plan_worker` turns the API's options (a rule file, keyword rules, ``learn=``) into the
:class:`~pysandboxes.launch.cli.RunPlan` the command line would have made (``plan_run``: rule
file, includes, variables, the lock, the mode); :func:`start_worker` builds the child's
environment and temporary directory, asks the provider to ``prepare`` the launch of the
bootstrap with the program kind ``worker``, and spawns it with a socketpair end inherited.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time

from pysandboxes.errors import ConfigError, ConfigProblem, ProviderUnavailableError
from pysandboxes.launch import cli

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from pysandboxes.providers.base import Prepared


def plan_worker(
    rules: str | None,
    keyword_rules: dict[str, str | list[str]] | None,
    learn: str | bool | None,
    cwd: str,
    caller_file: str | None,
) -> cli.RunPlan:
    """The run plan of a worker (``ConfigError`` when the rules refuse it)."""

    from pysandboxes.launch.argv import CommandLine

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
    if plan.mode != "enforce" and cli.learning_session_class() is None:
        raise ConfigError([ConfigProblem("<arg>", "learning mode is not available here")])
    return plan


def provider_of(plan: cli.RunPlan) -> Any:
    """The plan's provider, or ``ProviderUnavailableError`` saying why and what to install."""

    from pysandboxes.providers import get_provider

    name = plan.provider_name
    where = str(plan.policy.os_sandbox.origin or "<default>") if plan.mode == "enforce" else "<arg>"
    if name == "none":
        message = (
            "os-sandbox=none runs in the caller's own interpreter: partial mode needs a separate "
            "worker (use os-sandbox=subprocess or a kernel provider)"
        )
        raise ConfigError([ConfigProblem(where, message)])
    try:
        provider = get_provider(name)
    except ConfigError as exc:
        messages = [problem.message for problem in exc.problems]
        raise ProviderUnavailableError([ConfigProblem(where, m) for m in messages]) from None
    available = provider.availability()
    if not available:
        hint = f" ({available.install_hint})" if available.install_hint else ""
        message = f"os-sandbox={name} cannot run here: {available.reason}{hint}"
        raise ProviderUnavailableError([ConfigProblem(where, message)])
    return provider


class Started:
    """A spawned worker: its process, the parent's socket end and what to clean up."""

    def __init__(
        self,
        process: _Process,
        sock: socket.socket,
        prepared: Prepared,
        tmpdir: str,
        session: Any,
    ) -> None:
        self.process = process
        self.sock = sock
        self.prepared = prepared
        self.tmpdir = tmpdir
        self.session = session
        #: Bytes read ahead from the socket (``pool.Worker._read_frame``).
        self.buffer = b""

    def kill(self) -> None:
        """End the worker now (SIGKILL): its process, and with it the sandbox around it."""

        relay = self.prepared.relay
        try:
            if relay is not None and sys.platform != "win32":  # bubblewrap: its own session
                import signal

                with contextlib.suppress(OSError):
                    relay.deliver(signal.SIGKILL, False)
            self.process.kill()
        except ProcessLookupError:
            pass

    def finish(self) -> int | None:
        """Wait for the process and release everything (learning output written here)."""

        from pysandboxes.launch.tmpdir import remove_tree_safely

        with contextlib.suppress(OSError):
            self.sock.close()
        status = self.process.wait(timeout=5)
        if status is None:
            self.kill()
            status = self.process.wait()
        if self.prepared.relay is not None:
            self.prepared.relay.close()
        if self.session is not None:
            try:
                self.session.finish(status)
            except Exception as exc:  # the worker's end must not raise in the caller
                sys.stderr.write(f"python-sb: during exit: {type(exc).__name__}: {exc}\n")
        for cleanup in self.prepared.cleanup:
            try:
                cleanup()
            except Exception as exc:
                sys.stderr.write(f"python-sb: cleanup: {type(exc).__name__}: {exc}\n")
        remove_tree_safely(self.tmpdir)
        return status


def start_worker(plan: cli.RunPlan, *, threads: int, max_result: int, path0: str) -> Started:
    """Spawn a worker for ``plan`` (see the module docstring)."""

    from pysandboxes.launch import tmpdir as tmp
    from pysandboxes.launch.wire import bootstrap_args, encode_run, guard_data
    from pysandboxes.policy.decide import build_environment
    from pysandboxes.providers.base import Launch
    from pysandboxes.runtime import RunContext

    provider = provider_of(plan)
    if plan.mode == "enforce":
        env = build_environment(plan.policy, os.environ)
    else:
        env = dict(os.environ)
        env.pop("TMPDIR", None)
    base = tmp.base_directory(os.environ)
    tmpdir = tmp.create(base)
    # AF_UNIX on POSIX; socketpair's own default elsewhere (a loopback pair on Windows).
    if sys.platform == "win32":
        parent_end, child_end = socket.socketpair()
    else:
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    fd = -1
    try:
        env.setdefault("TMPDIR", tmpdir)
        session = None
        if plan.mode != "enforce":
            session_class = cli.learning_session_class()
            session = session_class(
                plan.policy,
                mode=plan.mode,
                output=plan.learn_output,
                cwd=plan.cwd,
                program_kind="code",
                program=None,
                denials_file=None,
                tmpdir=tmpdir,
                prefixes=cli._prefixes(),
            )
        context = RunContext(
            mode=plan.mode,  # type: ignore[arg-type]
            provider=plan.provider_name,
            cwd=plan.cwd,
            tmpdir=tmpdir,
            program_kind="worker",  # type: ignore[arg-type]
            program=None,
            python=sys.executable,
            prefixes=cli._prefixes(),
            record_fd=session.child_fd() if session is not None else -1,
            denials_file=None,
        )
        arm = bool(plan.policy.py_sandbox.value) or plan.mode != "enforce"
        child_fd = child_end.fileno()
        os.set_inheritable(child_fd, True)
        fields = {
            "kind": "worker",
            "program": path0,
            "x": "0",
            "tmpdir": tmpdir,
            "arm": "1" if arm else "0",
            "n_words": "0",
            "argv0": "-c",
            "worker_fd": str(child_fd),
            "threads": str(threads),
            "max_result": str(max_result),
        }
        data = guard_data(context, plan.policy) if arm else b""
        fd = cli._policy_fd(encode_run(fields, [], data))
        child_argv = (sys.executable, *bootstrap_args(fd))
        pass_fds = (fd, child_fd) if context.record_fd < 0 else (fd, child_fd, context.record_fd)
        launch = Launch(
            policy=plan.policy,
            context=context,
            child_argv=child_argv,
            env=env,
            pass_fds=pass_fds,
            cwd=plan.cwd,
        )
        prepared: Prepared = provider.prepare(launch)
        for warning in prepared.warnings:
            sys.stderr.write(f"python-sb: {warning}\n")
        process = _spawn(prepared, keep=(*pass_fds, *prepared.pass_fds))
        if prepared.relay is not None:
            prepared.relay.started(process.pid)
        if session is not None:
            session.start()
    except BaseException:
        parent_end.close()
        tmp.remove_tree_safely(tmpdir)
        raise
    finally:
        child_end.close()
        if fd >= 0:
            os.close(fd)
    return Started(process, parent_end, prepared, tmpdir, session)


class _Process:
    """The worker's process (``subprocess.Popen``'s few methods used here)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._lock = threading.Lock()

    def poll(self) -> int | None:
        return self._reap(_WNOHANG)

    def wait(self, timeout: float | None = None) -> int | None:
        """The status (minus the signal number when killed); ``None`` after ``timeout``."""

        if timeout is None:
            return self._reap(0)
        end = time.monotonic() + timeout
        while True:
            status = self._reap(_WNOHANG)
            if status is not None or time.monotonic() >= end:
                return status
            time.sleep(0.005)

    def _reap(self, flags: int) -> int | None:
        if sys.platform == "win32":  # for type checkers: _Process wraps a forked child only
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
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, 9)


_WNOHANG = getattr(os, "WNOHANG", 1)


class _Spawned(_Process):
    """A worker started by ``subprocess`` where there is no ``fork`` (``CAPS.fork``)."""

    def __init__(self, popen: Any) -> None:
        super().__init__(popen.pid)
        self._popen = popen

    def poll(self) -> int | None:
        self.returncode = self._popen.poll()
        return self.returncode  # type: ignore[no-any-return]

    def wait(self, timeout: float | None = None) -> int | None:
        import subprocess

        try:
            self.returncode = self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        return self.returncode

    def kill(self) -> None:
        if self._popen.poll() is None:
            with contextlib.suppress(OSError):
                self._popen.kill()


def _spawn(prepared: Prepared, keep: tuple[int, ...]) -> _Process:
    from pysandboxes.platform_caps import CAPS

    if not CAPS.fork or sys.platform == "win32":
        return _start_without_fork(prepared, keep)
    return _fork_exec(prepared, keep)


def _start_without_fork(prepared: Prepared, keep: tuple[int, ...]) -> _Process:
    """``subprocess.Popen`` where ``fork`` is missing (the ``spawn`` profile of the test
    switch; Windows' process start): only a provider without ``pre_exec`` steps (``none``,
    ``subprocess``: the kernel providers are Linux's, and fork)."""

    import subprocess

    if prepared.pre_exec:
        raise ProviderUnavailableError(
            [ConfigProblem("provider", "its start-up steps need fork, missing on this platform")]
        )
    keep_fds = tuple(sorted({fd for fd in keep if fd > 2}))
    popen = subprocess.Popen(
        list(prepared.argv),
        env=dict(prepared.env),
        stdin=subprocess.DEVNULL,
        stdout=2,  # never the caller's stdout (a stdio MCP server's protocol channel)
        pass_fds=keep_fds if os.name == "posix" else (),
        close_fds=True,
    )
    return _Spawned(popen)


def _fork_exec(prepared: Prepared, keep: tuple[int, ...]) -> _Process:
    """Fork, apply the provider's ``pre_exec`` steps, exec (as the supervisor does).

    Not ``subprocess.Popen(preexec_fn=...)``: a provider's step may never return in the process
    it runs in (``unshare`` makes it the sandbox's outer process, which waits for the program),
    and Popen would wait for that process to exec. Between fork and exec the child only
    closes descriptors, applies the steps and execs; the modules the steps use are imported
    here first (a forked child of a threaded program must not take the import lock).
    """

    import _socket  # noqa: F401  (used by unshare's step)
    import fcntl  # noqa: F401

    from pysandboxes.providers.descriptors import close_inherited

    keep_fds = sorted({fd for fd in keep if fd > 2})
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        if sys.platform == "win32":  # for type checkers: _spawn chose by CAPS.fork
            raise OSError("no fork on Windows")
        pid = os.fork()
    except BaseException:
        os.close(devnull)
        raise
    if pid == 0:
        try:
            os.dup2(devnull, 0)
            os.dup2(2, 1)  # never the caller's stdout (a stdio MCP server's protocol channel)
            close_inherited(keep_fds)
            for step in prepared.pre_exec:
                step()
            os.execve(prepared.argv[0], prepared.argv, prepared.env)
        except BaseException as exc:
            try:
                os.write(2, f"python-sb: cannot start the sandboxed worker: {exc}\n".encode())
            finally:
                os._exit(127)
    os.close(devnull)
    return _Process(pid)
