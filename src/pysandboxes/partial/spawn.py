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
import subprocess
import sys

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
        process: subprocess.Popen[bytes],
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
            if relay is not None:  # bubblewrap: the program is in its own session
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
        try:
            status = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
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
    from pysandboxes.launch.wire import bootstrap_code, encode_run, guard_data
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
        child_argv = (sys.executable, "-c", bootstrap_code(fd))
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
        steps = list(prepared.pre_exec)

        def pre_exec() -> None:
            for step in steps:
                step()

        process = subprocess.Popen(
            prepared.argv,
            env=prepared.env,
            pass_fds=tuple(prepared.pass_fds or pass_fds),
            cwd=plan.cwd,
            stdin=subprocess.DEVNULL,
            stdout=2,  # never the caller's stdout (a stdio MCP server's protocol channel)
            preexec_fn=pre_exec if steps else None,
            close_fds=True,
        )
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
