"""The one start path of every sandboxed interpreter (DESIGN decision 9, issue 24).

Every entry point -- the command line (a script, ``-m``, ``-c``, stdin, the REPL; learning and
``--audit`` runs included), partial mode's workers and guarded evaluation's workers (which start
as partial-mode workers), under every provider, qemu's VM included -- plans its run
(``launch/cli.plan_run``: rule file, includes, variables, the lock, the mode) and hands the plan
and a :class:`Request` (the program kind and what that kind needs) to :func:`prepare`, which
does each step once, in this order:

1. the provider: importable, available here (or a refusal saying why and what to install), and
   whether it runs the program in this very interpreter (``provider.in_process``: ``none``),
   which a worker cannot and a command line only with the CPython options that still apply;
2. the ``--denials`` file, appendable; the ``eval-*`` rules, each grantable (through the eval
   extension the child hands the guard: ``child.EXTENSIONS``); the script, readable under its
   rules (``policy/decide.script_readable``, worded by ``providers/limits.check_script``);
3. the environment from ``env=`` (learning and audit: python-sb's whole environment);
4. the private temporary directory, after the sweep of the ones finished runs left;
5. the learning session (learn and audit modes);
6. the run context and the guard's policy, with the addresses of its DENY names pinned
   (``policy/netrules.pin_deny_names``);
7. the hand-over channel (``launch/channel.py``: a memfd or a pipe, never a named file);
8. the provider's ``prepare`` and its announcements (said on stderr);

and gives back a :class:`Start`, which the entry point runs one of four ways: :meth:`Start.exec`
(nothing stays: DESIGN decision 4), :meth:`Start.supervise` (python-sb stays as the parent:
learning, a network helper, a VM, no replacing exec on this platform), :meth:`Start.spawn` (a
worker: the caller keeps running and talks to it) or :meth:`Start.run_in_process`. The fork,
the ``pre_exec`` steps and the exec are one routine (``launch/spawn.py``); every way ends
through :meth:`Start.finish` (``spawn.release``). A failure before the program runs releases
what the steps made (:meth:`Start.abandon`).

Start-up time matters (DESIGN decision 7): this module imports only ``os`` and ``sys``.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn

    from pysandboxes.launch.channel import Channel
    from pysandboxes.launch.cli import RunPlan
    from pysandboxes.launch.spawn import Process
    from pysandboxes.policy.model import Policy
    from pysandboxes.providers.base import Launch, Prepared, ProviderImpl
    from pysandboxes.runtime import RunContext

__all__ = [
    "PROGRAM_KINDS",
    "WORKER_KINDS",
    "Request",
    "Start",
    "become",
    "prepare",
    "provider_for",
]

#: The program kinds of the command line (``launch/argv.py``).
PROGRAM_KINDS = ("script", "module", "code", "stdin", "repl")
#: The program kinds of the API: a partial-mode worker and guarded evaluation's worker (a
#: partial-mode worker whose channel the eval protocol takes over).
WORKER_KINDS = ("worker", "eval-worker")
PROG = "python-sb"


class Request:
    """What to start, besides the plan: the program kind and what that kind needs.

    - ``kind``: one of :data:`PROGRAM_KINDS` or :data:`WORKER_KINDS`.
    - ``program``: the script path (as given), module name or code; for a worker, the caller's
      ``sys.path[0]`` (the worker's own).
    - ``args``: the program's arguments; ``python_options``/``python_words``: the CPython
      options for the interpreter and the words of the command line (``sys.orig_argv``).
    - ``fields``: run-description fields of this kind (a REPL's banner; a worker's socket
      descriptor, threads and result limit), added to the ones every kind has.
    - ``keep_fds``: the caller's descriptors the child inherits (a worker's socket end); a
      worker's child keeps nothing else.
    - ``denials``: ``--denials=FILE``.
    """

    def __init__(
        self,
        kind: str,
        program: str | None = None,
        *,
        args: Sequence[str] = (),
        python_options: Sequence[str] = (),
        python_words: Sequence[str] = (),
        skip_first_line: bool = False,
        fields: dict[str, str] | None = None,
        keep_fds: Sequence[int] = (),
        denials: str | None = None,
    ) -> None:
        if kind not in PROGRAM_KINDS and kind not in WORKER_KINDS:
            raise ValueError(f"unknown program kind {kind!r}")
        self.kind = kind
        self.program = program
        self.args = list(args)
        self.python_options = list(python_options)
        self.python_words = list(python_words)
        self.skip_first_line = skip_first_line
        self.fields = dict(fields or {})
        self.keep_fds = tuple(keep_fds)
        self.denials = denials

    @property
    def is_worker(self) -> bool:
        return self.kind in WORKER_KINDS


def provider_for(plan: RunPlan, *, worker: bool = False) -> ProviderImpl:
    """Step 1: the plan's provider, available here; ``ProviderUnavailableError`` saying why
    and what to install, or ``ConfigError`` for an in-process provider asked for a worker."""

    from pysandboxes.errors import ConfigError, ConfigProblem, ProviderUnavailableError
    from pysandboxes.launch.interpreter import start_unit
    from pysandboxes.providers import get_provider

    name = plan.provider_name
    where = _chosen_where(plan)
    start_unit(name)  # the provider's modules from its unit, if it has one (launch/unit.py)
    try:
        provider = get_provider(name)
    except ConfigError as exc:
        messages = [problem.message for problem in exc.problems]
        raise ProviderUnavailableError([ConfigProblem(where, m) for m in messages]) from None
    if worker and provider.in_process:
        message = (
            f"os-sandbox={name} runs in the caller's own interpreter: partial mode needs a "
            "separate worker (use os-sandbox=subprocess or a kernel provider)"
        )
        raise ConfigError([ConfigProblem(where, message)])
    if worker and not provider.passes_descriptors:
        message = (
            f"os-sandbox={name} cannot run a partial-mode worker: the socket a worker talks "
            "to its caller through does not cross into it (use landlock, bwrap or unshare)"
        )
        raise ConfigError([ConfigProblem(where, message)])
    available = provider.availability()
    if not available:
        from pysandboxes.providers import unavailable_message

        message = unavailable_message(name, available)
        raise ProviderUnavailableError([ConfigProblem(where, message)])
    return provider


class Start:
    """One sandboxed interpreter being started: what the steps of :func:`prepare` made, and
    the four ways to run it (see the module docstring)."""

    def __init__(self, plan: RunPlan, request: Request, provider: ProviderImpl) -> None:
        self.plan = plan
        self.request = request
        self.provider = provider
        self.env: dict[str, str] = {}
        self.tmpdir = ""
        self.session: Any = None
        self.context: RunContext | None = None
        #: The policy the Python layer gets: the plan's, DENY names' addresses pinned.
        self.guard_policy: Policy = plan.policy
        self.fields: dict[str, str] = {}
        self.words: list[str] = []
        self.channel: Channel | None = None
        self.prepared: Prepared | None = None
        self.process: Process | None = None
        #: How a worker's processes end with it (``launch/spawn.TREES``; ``""``: not a worker).
        self.tree = ""
        self._finished = False

    # -- the ways to run it ------------------------------------------------------------------------

    @property
    def needs_parent(self) -> bool:
        """Whether python-sb must stay as the parent (learning or audit, a network helper, a
        VM, a platform whose exec does not replace the process)."""

        from pysandboxes.platform_caps import CAPS

        assert self.prepared is not None
        return self.session is not None or not CAPS.exec or self.prepared.needs_parent

    def exec(self) -> int:
        """Become the sandboxed interpreter (never returns; raises when a step or the exec
        fails, before anything ran)."""

        assert self.prepared is not None
        sys.stdout.flush()
        sys.stderr.flush()
        become(self.prepared, self.channel)
        raise AssertionError("unreachable")

    def supervise(self) -> int:
        """Start the interpreter as python-sb's child and end as it ends (``supervisor.py``)."""

        from pysandboxes.launch.supervisor import supervise

        assert self.prepared is not None
        session = self.session
        from pysandboxes.launch.interpreter import settle_heap

        settle_heap()  # python-sb's start is over: it waits for its child from here on
        return supervise(
            self.prepared,
            on_start=session.start if session is not None else None,
            on_exit=[self._on_exit],
            channel=self.channel,
        )

    def spawn(self) -> Process:
        """Start a worker as the caller's child: standard input from ``/dev/null``, standard
        output to standard error, no descriptor of the caller's but ``keep_fds``."""

        from pysandboxes.launch import spawn

        assert self.prepared is not None and self.channel is not None
        process = spawn.start(
            self.prepared,
            what="worker",
            keep=self._pass_fds(),
            quiet_stdio=True,
            handle=self.channel.handle,
            tree=self.tree,
        )
        self.process = process
        self.channel.after_spawn()
        if self.prepared.relay is not None:
            self.prepared.relay.started(process.pid)
        if self.session is not None:
            self.session.start()
        return process

    def run_in_process(self) -> int:
        """``provider.in_process`` (``none``): the program runs in this very interpreter."""

        from pysandboxes.launch.inprocess import run_in_process

        assert self.context is not None
        return run_in_process(
            self.fields,
            self.words,
            policy=self.guard_policy,
            context=self.context,
            env=self.env,
            options=self.request.python_options,
        )

    # -- the end ------------------------------------------------------------------------------

    def kill(self) -> None:
        """End a spawned worker now (SIGKILL): its process and every process it started
        (``self.tree``), and with it the sandbox around it (bubblewrap, which runs in a session
        of its own, through its relay)."""

        prepared, process = self.prepared, self.process
        if process is None or prepared is None:
            return
        relay = prepared.relay
        try:
            if relay is not None and sys.platform != "win32":
                try:  # noqa: SIM105
                    relay.deliver(9, False)
                except OSError:
                    pass
            process.kill()
        except ProcessLookupError:
            pass

    def finish(self, status: int | None) -> None:
        """Once, on every exit path of a spawned or supervised run: the relay, the learning
        session's ``finish`` (rules or the audit report written), the provider's cleanups,
        the temporary directory (``spawn.release``)."""

        if self._finished or self.prepared is None:
            return
        from pysandboxes.launch.spawn import release

        if self.process is not None:
            self.process.sweep()
        release(self.prepared, [self._on_exit], status)

    def _on_exit(self, status: int | None) -> None:
        if self._finished:
            return
        self._finished = True
        try:
            if self.session is not None:
                self.session.finish(status)
        finally:
            self._remove_tmpdir()
            if self.channel is not None:
                self.channel.close()

    def abandon(self) -> None:
        """A start that failed before the program ran: release what the steps made."""

        if self._finished:
            return
        self._finished = True
        if self.channel is not None:
            self.channel.close()
        self._remove_tmpdir()

    def _remove_tmpdir(self) -> None:
        if self.tmpdir:  # written by the program: walked without following symlinks
            from pysandboxes.launch.tmpdir import remove_tree_safely

            remove_tree_safely(self.tmpdir)

    def _pass_fds(self) -> tuple[int, ...]:
        channel, context = self.channel, self.context
        inherited: tuple[int, ...] = ()
        if channel is not None and channel.handle < 0:
            inherited = (channel.fd,)
        if context is not None and context.record_fd >= 0:
            inherited = (*inherited, context.record_fd)
        return (*inherited, *self.request.keep_fds)


def prepare(plan: RunPlan, request: Request) -> Start:
    """Do every step of a start (see the module docstring) and give the :class:`Start` to run.

    Raises ``ConfigError`` (exit status 2 on the command line: nothing ran) or ``OSError``;
    whatever the steps made by then is released first.
    """

    provider = provider_for(plan, worker=request.is_worker)
    start = Start(plan, request, provider)
    if provider.in_process:
        _check_in_process_options(request)
    _check_request(plan, request, provider)
    try:
        _prepare(start)
    except BaseException:
        start.abandon()
        raise
    return start


def _check_in_process_options(request: Request) -> None:
    from pysandboxes.errors import ConfigError, ConfigProblem
    from pysandboxes.providers.none import IN_PROCESS_OPTIONS

    options = request.python_options
    refused = [o for o in options if o.startswith("-") and o not in IN_PROCESS_OPTIONS]
    if refused:
        message = (
            "os-sandbox=none runs the program in python-sb's own interpreter, which has "
            f"already started: {' '.join(refused)} cannot be applied (use "
            "os-sandbox=subprocess)"
        )
        raise ConfigError([ConfigProblem("<arg>", message)])


def _check_request(plan: RunPlan, request: Request, provider: ProviderImpl) -> None:
    """Step 2: refusals that need no resource yet."""

    from pysandboxes.errors import ConfigError, ConfigProblem

    if request.denials is not None:
        target = _abs(request.denials) or request.denials
        try:
            with open(target, "a", encoding="utf-8"):
                pass
        except OSError as exc:
            message = f"--denials={request.denials}: cannot be written: {exc.strerror or exc}"
            raise ConfigError([ConfigProblem("<arg>", message)]) from None
    if plan.policy.eval_rules and plan.mode != "learn" and plan.policy.py_sandbox.value:
        # Every profile built now, as the child's guard will (a rule no profile may grant is
        # refused before anything starts; an audit too: it reports against the rules, and a
        # file that cannot run has none to report against): through the extension the child
        # hands the guard, loaded by name (a layer above launch).
        from pysandboxes.launch.child import EXTENSIONS

        __import__(EXTENSIONS["eval"], fromlist=("check",)).check(plan.policy)
    judged = bool(plan.policy.py_sandbox.value) or provider.kernel
    if plan.mode == "enforce" and request.kind == "script" and request.program and judged:
        # One behaviour under every provider (SPEC 5.2, issue 11 point 8): a script its rules
        # do not let the sandbox read is refused here, naming the rule to add.
        from pysandboxes.policy.decide import script_readable

        if not script_readable(plan.policy, request.program, prefixes()):
            from pysandboxes.policy.model import display_path
            from pysandboxes.providers.limits import unreadable_script  # its wording

            refusal = unreadable_script(request.program)

            raise ConfigError([ConfigProblem(display_path(plan.rule_file), refusal.text)])


def _prepare(start: Start) -> None:
    """Steps 3 to 8 (see the module docstring)."""

    from pysandboxes.launch import tmpdir as tmp
    from pysandboxes.runtime import RunContext, accelerator_choice

    plan, request, provider = start.plan, start.request, start.provider
    if plan.mode == "enforce":
        from pysandboxes.policy.decide import build_environment

        env = build_environment(plan.policy, os.environ)
    else:
        # Learning and audit enforce nothing: the program gets python-sb's whole environment,
        # and the guard records which variables it reads (learned as env= lines, or reported
        # when the rules would not pass them).
        env = dict(os.environ)
        env.pop("TMPDIR", None)
    start.env = env
    base = tmp.base_directory(os.environ)
    tmp.sweep(base)
    start.tmpdir = tmpdir = tmp.create(base)
    env.setdefault("TMPDIR", tmpdir)
    program = request.program
    if request.kind == "script" and program is not None:
        program = os.path.abspath(program)
    denials = _abs(request.denials)
    if plan.mode != "enforce":
        session_class = learning_session_class()
        if session_class is None:
            refuse_without_learning(plan)
        # A worker's accesses are the functions', learned as code's (no script of their own).
        start.session = session_class(
            plan.policy,
            mode=plan.mode,
            output=plan.learn_output,
            cwd=plan.cwd,
            program_kind="code" if request.is_worker else request.kind,
            program=None if request.is_worker else program,
            denials_file=denials,
            tmpdir=tmpdir,
            prefixes=prefixes(),
            # The REPL on a missing rule file learns but keeps nothing unless asked to
            # (--learn, a learn= line: the policy's learn value).
            write=request.kind != "repl" or bool(plan.policy.learn.value),
        )
    try:
        accelerator = accelerator_choice(os.environ)
    except ValueError as exc:
        from pysandboxes.errors import ConfigError, ConfigProblem

        raise ConfigError([ConfigProblem("<environment>", str(exc))]) from None
    context = RunContext(
        mode=plan.mode,  # type: ignore[arg-type]
        provider=provider.name,
        cwd=plan.cwd,
        tmpdir=tmpdir,
        program_kind=request.kind,  # type: ignore[arg-type]
        program=None if request.is_worker else program,
        python=sys.executable,
        prefixes=prefixes(),
        record_fd=start.session.child_fd() if start.session is not None else -1,
        denials_file=denials,
        home=_home(),
        accelerator=accelerator,
    )
    start.context = context
    if plan.policy.secrets and (plan.mode != "enforce" or start.provider.edge != "netns"):
        from pysandboxes.errors import ConfigError

        secret = plan.policy.secrets[0]
        # The edge proxy of a network namespace puts secrets in requests (docs/network.md).
        raise ConfigError(
            f"{secret.origin}: {secret.text}: secrets need os-sandbox=bwrap or unshare in "
            f"enforce mode (this run: os-sandbox={start.provider.name}, {plan.mode})"
        )
    for secret in plan.policy.secrets:
        named = {r.host for r in plan.policy.net if r.is_name and r.action == "ALLOW"}
        if not set(secret.hosts) <= named:
            from pysandboxes.errors import ConfigError

            raise ConfigError(
                f"{secret.origin}: {secret.text}: no net=ALLOW rule names "
                f"{', '.join(sorted(set(secret.hosts) - named))} (the secret is only sent "
                "through the edge proxy to an allowed host)"
            )
    arm = bool(plan.policy.py_sandbox.value) or plan.mode != "enforce"
    if arm and plan.policy.net:
        from pysandboxes.policy.netrules import pin_deny_names

        # The Python layer denies the addresses of DENY names too, resolved once, now.
        start.guard_policy = pin_deny_names(plan.policy)
        if start.provider.edge:
            from pysandboxes.providers.edge_rules import edge_guard_rule

            # The proxy variables name the edge proxy: the Python layer lets the program reach
            # it (the proxy judges the host the program asks it for).
            edge = edge_guard_rule(plan.policy, start.provider.edge)
            if edge is not None:
                start.guard_policy = start.guard_policy.replace(net=(*start.guard_policy.net, edge))
    fields = {
        "kind": request.kind,
        "program": request.program or "",
        "x": "1" if request.skip_first_line else "0",
        "tmpdir": tmpdir,
        "arm": "1" if arm else "0",
        "n_words": str(len(request.python_words)),
    }
    profile = _portable_profile()
    if profile:  # the test switch reaches the child's guard too (platform_caps.adopt)
        fields["portable"] = profile
    if request.kind == "repl":
        # CPython runs PYTHONSTARTUP for the REPL: the one the program's environment holds.
        isolated = "-E" in request.python_options or "-I" in request.python_options
        startup = env.get("PYTHONSTARTUP", "")
        if startup and not isolated:
            fields["startup"] = startup
    fields.update(request.fields)
    start.fields = fields
    start.words = [*request.python_words, *request.args]
    _hand_over_and_prepare(start, arm)


def _hand_over_and_prepare(start: Start, arm: bool) -> None:
    """Steps 7 and 8: the channel, the provider's ``prepare``, its announcements."""

    from pysandboxes.launch.channel import Channel
    from pysandboxes.launch.wire import bootstrap_args, encode_run, guard_data
    from pysandboxes.platform_caps import CAPS
    from pysandboxes.providers.base import Launch

    plan, request, context = start.plan, start.request, start.context
    assert context is not None
    # The start's modules as units, for this run's child and the next start (launch/unit.py).
    from pysandboxes.launch import unit

    unit.ensure(unit.PACKAGE_DIR)
    if start.provider.in_process:  # nothing to hand over: the program runs here
        _prepare_provider(start, Launch(plan.policy, context, (), start.env, (), plan.cwd))
        return
    # The policy and the run context are for the guard: a run without it does not encode them.
    data = guard_data(context, start.guard_policy) if arm else b""
    payload = encode_run(start.fields, start.words, data)
    # Where exec does not replace the process (Windows; PYSANDBOXES_PORTABLE=spawn), python-sb
    # starts the program and stays as its parent (docs/security-model.md, Platforms); a worker
    # always has its caller as parent.
    stays = request.is_worker or start.session is not None or not CAPS.exec
    start.channel = Channel(payload, spawn=stays)
    options = list(request.python_options)
    if request.kind == "repl" and start.fields.get("ipython") != "1" and "-i" not in options:
        options.append("-i")  # the native REPL starts when the bootstrap returns
    child_argv = (sys.executable, *options, *bootstrap_args(start.channel.token))
    launch = Launch(
        policy=plan.policy,
        context=context,
        child_argv=child_argv,
        env=start.env,
        pass_fds=start._pass_fds(),
        cwd=plan.cwd,
    )
    _prepare_provider(start, launch)


def _chosen_where(plan: RunPlan) -> str:
    """Where the run's provider was chosen, as a problem's label: the ``os-sandbox=`` line
    (``<arg>`` for the option), ``<default>``; ``<arg>`` for ``--learn``/``--audit``."""

    if plan.mode != "enforce":
        return "<arg>"
    return str(plan.policy.os_sandbox.origin or "<default>")


def _prepare_provider(start: Start, launch: Launch) -> None:
    """Step 8: the provider's ``prepare`` and its announcements, said on stderr; for a worker,
    how its processes end with it (issue 25: the mechanism is said at start). A refusal of
    ``prepare`` that names no line is labelled with the one that chose the provider (issue
    26: a command-line choice was shown as ``<config>``, not ``<arg>``)."""

    from pysandboxes.errors import ConfigError, ConfigProblem

    try:
        prepared: Prepared = start.provider.prepare(launch)
    except ConfigError as exc:
        if not any(problem.where == "<config>" for problem in exc.problems):
            raise
        where = _chosen_where(start.plan)
        problems = [
            ConfigProblem(where, p.message, p.sort_key) if p.where == "<config>" else p
            for p in exc.problems
        ]
        raise type(exc)(problems) from None
    start.prepared = prepared
    warnings = prepared.warnings
    if start.plan.policy.acknowledge:  # the limits the rules say are known: not said again
        from pysandboxes.providers.limits import unacknowledged

        known = tuple(rule.name for rule in start.plan.policy.acknowledge)
        warnings = unacknowledged(warnings, known)
    for warning in warnings:
        sys.stderr.write(f"{PROG}: {warning}\n")
    if start.request.is_worker:
        from pysandboxes.launch.spawn import tree_mechanism

        start.tree = tree_mechanism(start.provider.contains_processes)
        acknowledged = {rule.name for rule in start.plan.policy.acknowledge}
        if start.tree != "provider" and f"processes.{start.tree}" not in acknowledged:
            sys.stderr.write(f"{PROG}: {start.provider.name}: {_tree_notice(start.tree).text}\n")


def _tree_notice(tree: str) -> Any:
    """The sentence of ``providers/limits.py`` that says how a worker's processes end."""

    from pysandboxes.providers import limits

    reason = ""
    if tree == "subreaper" and sys.platform == "linux":  # (only there: tree_mechanism)
        from pysandboxes.providers import _ns_probe

        reason = _ns_probe.pid_namespace_problem() or "PYSANDBOXES_PROCESS_TREE=subreaper"
    return limits.notice(f"processes.{tree}", True, reason=reason)


def become(prepared: Prepared, channel: Any = None, keep: Sequence[int] = ()) -> NoReturn:
    """Finish the hand-over (``channel.before_exec``), close every descriptor above 2 but
    ``prepared.pass_fds`` and ``keep`` (issue 23: what python-sb inherited from its caller
    stays out of the sandbox, ``providers/descriptors.py``), apply ``prepared``'s ``pre_exec``
    steps in this process and exec the sandboxed command. Raises (``OSError``,
    ``ConfigError``) when a step or the exec fails: nothing has run then. The one exec of
    every start: the command line's own process, and the child ``launch/spawn.start`` forks
    (which imports what this uses before the fork)."""

    from pysandboxes.providers.descriptors import close_inherited

    if channel is not None:
        channel.before_exec()  # a pipe's writer (no memfd): before its write end is closed
    close_inherited((*prepared.pass_fds, *keep))
    for step in prepared.pre_exec:
        step()
    os.execve(prepared.argv[0], prepared.argv, prepared.env)
    raise AssertionError("unreachable")  # execve returns only by raising


def _home() -> str:
    """python-sb's home directory (``RunContext.home``: the ``~`` of messages in the child,
    whose environment need not hold ``HOME``); ``""`` when there is none to show."""

    home = os.path.expanduser("~")
    return "" if home in ("~", "/") else home


def learning_session_class() -> Any:
    """``LearningSession``, or ``None`` when this version has no learning mode."""

    try:
        from pysandboxes.learn.session import LearningSession
    except ImportError as exc:
        if exc.name is not None and not exc.name.startswith("pysandboxes.learn"):
            raise
        return None
    return LearningSession


def refuse_without_learning(plan: RunPlan) -> None:
    """The refusal of a learning or audit run where this version has no learning mode."""

    from pysandboxes.errors import ConfigError, ConfigProblem

    if not plan.rule_file_exists:
        problem = ConfigProblem(
            plan.rule_file,
            "no rule file here (this is where it was looked for); learning mode, which would "
            "write it, is not available in this version",
        )
    else:
        problem = ConfigProblem("<arg>", "learning and audit mode are not available here")
    raise ConfigError([problem])


def prefixes() -> tuple[str, ...]:
    """The interpreter's installation and site directories (readable by default, SPEC §3.1),
    and the directory that holds ``pysandboxes``: ``interpreter.installation_dirs``, the one
    definition (the bootstrap needs it too, at the program's end)."""

    from pysandboxes.launch.interpreter import installation_dirs

    return installation_dirs()


def _abs(path: str | None) -> str | None:
    return None if path is None else os.path.abspath(os.path.expanduser(path))


def _portable_profile() -> str:
    """The forced profile of ``PYSANDBOXES_PORTABLE`` (tests only), without importing
    ``platform_caps`` on the usual path."""

    if not os.environ.get("PYSANDBOXES_PORTABLE"):
        return ""
    from pysandboxes.platform_caps import CAPS

    return CAPS.profile
