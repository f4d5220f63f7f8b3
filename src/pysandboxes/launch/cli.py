"""``python-sb``: the command line entry point (console script ``pysandboxes.launch.cli:main``).

One run: split the command line (:mod:`pysandboxes.launch.argv`), locate and load the rule file,
choose the mode (enforce, learn, audit) and the provider, build the child's environment and
private temporary directory, then either ``exec`` the sandboxed interpreter (the usual case: no
process stays behind), stay as its supervisor (learning, audit, a provider that needs a parent),
or run the program in this very interpreter (``os-sandbox=none``).

Sub-commands are spelled as options before the program, ``python-sb --<verb>``
(``--explain``; later ``--review``, ``--check``), so no script name can collide with them.

Start-up time matters (DESIGN decision 7): only ``os`` and ``sys`` are imported at module level;
everything else is imported where it is needed.
"""

from __future__ import annotations

import os
import sys

from pysandboxes.launch.argv import PROG, CommandLine, UsageError, parse, usage_text

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from pysandboxes.policy.model import Policy
    from pysandboxes.providers.base import Prepared
    from pysandboxes.runtime import RunContext

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run ``python-sb`` with ``argv`` (default ``sys.argv[1:]``); the exit status.

    The program's own exit does not always return here: after ``exec`` python-sb is the program.
    """

    words = sys.argv[1:] if argv is None else list(argv)
    if words and words[0].partition("=")[0] in TOOLS:
        option, eq, value = words[0].partition("=")
        return run_tool(option, ([value] if eq else []) + words[1:])
    if os.environ.get("PYSANDBOXES_PORTABLE"):  # a test switch (platform_caps.py)
        from pysandboxes.platform_caps import switch_problem

        problem = switch_problem()
        if problem is not None:
            sys.stderr.write(f"{PROG}: {problem}\n{PROG}: nothing was run\n")
            return 2
    try:
        cmd = parse(words)
    except UsageError as exc:
        sys.stderr.write(f"{exc}\n{usage_text()}")
        return 2
    if cmd.action == "help":
        sys.stdout.write(help_text())
        return 0
    if cmd.action == "version":
        version = sys.version if cmd.version_level >= 2 else sys.version.split()[0]
        sys.stdout.write(f"Python {version}\n")
        return 0
    if cmd.action in ("help-env", "help-xoptions", "help-all"):
        sys.stdout.flush()
        os.execv(sys.executable, [sys.executable, f"--{cmd.action}"])
    from pysandboxes.errors import ConfigError

    try:
        if cmd.action == "explain":
            from pysandboxes.tools.explain import explain

            return explain(plan_run(cmd, current_directory()), as_json=cmd.json)
        return run(cmd)
    except ConfigError as exc:
        say_refused(exc)
        return 2
    except KeyboardInterrupt:
        if _state.program_started:
            raise  # the program's own (os-sandbox=none): CPython ends the process
        # Ctrl-C while python-sb prepares the run: end as an interrupted python would, quietly.
        from pysandboxes.launch.supervisor import die_by_signal

        die_by_signal(2)
        return 130
    except OSError as exc:
        if _state.program_started:
            raise
        sys.stderr.write(f"{PROG}: {exc}\n{PROG}: nothing was run\n")
        return 2


class _State:
    """Whether the program has started (after that, its exceptions are its own)."""

    program_started = False


_state = _State()


#: Sub-commands that take their own arguments rather than a run's: ``python-sb --VERB ...``
#: as the first word hands the rest to ``pysandboxes.tools.VERB.main(words) -> int``.
#: (``--explain`` takes the arguments of a run, so it is parsed with them.)
#: A dotted value names the module itself; ``--VERB=VALUE`` passes VALUE as the first word.
TOOLS = {
    "--review": "review",
    "--check": "check",
    "--hook": "pysandboxes.integrations.hook",
    "--install-hook": "pysandboxes.integrations.install",
    "--uninstall-hook": "pysandboxes.integrations.uninstall",
    # The sandboxed Jupyter kernel (docs/kernel.md)
    "--kernel": "pysandboxes.integrations.kernel",
    "--install-kernel": "pysandboxes.integrations.kernel_install",
    "--uninstall-kernel": "pysandboxes.integrations.kernel_uninstall",
    "--notebook": "pysandboxes.integrations.kernel_notebook",
}


def run_tool(option: str, words: list[str]) -> int:
    """Run the sub-command ``option`` (``--review``, ``--check``) with ``words``."""

    import importlib

    name = TOOLS[option] if "." in TOOLS[option] else f"pysandboxes.tools.{TOOLS[option]}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        sys.stderr.write(f"{PROG}: {option} is not available in this version of python-sb\n")
        return 2
    status: int = module.main(words)
    return status


def say_refused(exc: Exception) -> None:
    """A refused configuration: every problem on its own line, nothing ran (exit status 2)."""

    lines = str(exc).splitlines() or ["configuration refused"]
    sys.stderr.write("".join(f"{PROG}: {line}\n" for line in lines))
    sys.stderr.write(f"{PROG}: nothing was run\n")


def help_text() -> str:
    return (
        f"usage: {PROG} [python options] [--key=value ...] [--pysandboxes-config=FILE]\n"
        "                 [--learn[=FILE] | --audit] [--denials=FILE]\n"
        "                 (file | -m mod | -c cmd | - | nothing) [arg] ...\n"
        f"       {PROG} --explain [--json] [same arguments as a run]\n"
        f"       {PROG} --review [GIT-RANGE | OLD NEW] [--json]   (docs/review.md)\n"
        f"       {PROG} --hook=AGENT | --install-hook=AGENT [--user] | --uninstall-hook=AGENT\n"
        "                 (coding-agent hook: claude-code, codex, gemini, cursor, copilot;\n"
        "                 docs/agents.md)\n"
        f"       {PROG} --install-kernel --rules FILE [--name NAME] [--user] | --uninstall-kernel\n"
        f"       {PROG} --notebook NB.ipynb [--learn[=FILE]] [--pysandboxes-config=FILE]\n"
        "                 (the sandboxed Jupyter kernel; docs/kernel.md)\n"
        "\n"
        "Runs a Python program with the rights stated in a .py-sandboxes rule file.\n"
        "\n"
        "python-sb options (before the program):\n"
        "--key=value      : add the rule line key=value (origin <arg>); --key alone means key=\n"
        "                   e.g. --os-sandbox=subprocess, --py-sandbox=false, --env=NAME=value\n"
        "--pysandboxes-config=FILE, --pysandboxes-config FILE\n"
        "                 : use FILE as the rule file\n"
        "--learn[=FILE]   : learning mode: allow everything, write the rules of what the\n"
        "                   program did to FILE (default: the rule file in use)\n"
        "--audit          : enforce nothing, report what the rules would refuse\n"
        "--denials=FILE   : append every refusal to FILE as one JSON line\n"
        "--explain        : print the effective policy and the provider; run nothing\n"
        "--json           : with --explain, print it as JSON\n"
        "\n"
        "Python options: every option of python itself (-c, -m, -i, -I, -E, -s, -S, -u, -O,\n"
        "-B, -q, -v, -b, -d, -P, -R, -x, -W arg, -X opt, --check-hash-based-pycs, -V, -h).\n"
        f"See `{sys.executable} -h' for their meaning, and docs/cli.md.\n"
    )


# -- one run ---------------------------------------------------------------------------------------


class RunPlan:
    """What the rules and the command line decide before anything runs (shared with
    ``--explain``): the rule file, the policy, the mode and the provider."""

    def __init__(
        self,
        cmd: CommandLine,
        cwd: str,
        policy: Policy,
        rule_file: str,
        rule_file_exists: bool,
        mode: str,
        learn_output: str | None,
    ) -> None:
        self.cmd = cmd
        self.cwd = cwd
        self.policy = policy
        self.rule_file = rule_file
        self.rule_file_exists = rule_file_exists
        self.mode = mode
        self.learn_output = learn_output

    @property
    def provider_name(self) -> str:
        """The provider that runs the program: learning and audit apply no kernel layer, except
        ``qemu``'s disposable VM (the recommended place to learn untrusted code)."""

        if self.mode != "enforce":
            return "qemu" if self.policy.os_sandbox.value == "qemu" else "subprocess"
        return str(self.policy.os_sandbox.value)


def current_directory() -> str:
    """``os.getcwd()``, or a clear refusal when it was removed or cannot be read."""

    try:
        return os.getcwd()
    except OSError as exc:
        from pysandboxes.errors import ConfigError, ConfigProblem

        problem = ConfigProblem("<cwd>", f"the current directory cannot be used: {exc.strerror}")
        raise ConfigError([problem]) from None


def plan_run(cmd: CommandLine, cwd: str) -> RunPlan:
    """Locate and load the rules, check the lock, choose the mode. ``ConfigError`` if refused."""

    from pysandboxes.errors import ConfigError, ConfigProblem
    from pysandboxes.policy import check_lock, load_policy
    from pysandboxes.policy.locate import find_rule_file

    if cmd.audit and cmd.learn is not None:
        raise ConfigError([ConfigProblem("<arg>", "--learn and --audit cannot be combined")])
    rule_file = find_rule_file(cmd.config, cmd.kind, cmd.target, cwd)
    exists = os.path.isfile(rule_file)
    if not exists and os.path.exists(rule_file):
        problem = ConfigProblem(rule_file, "the rule file is not a regular file")
        raise ConfigError([problem])
    rules = list(cmd.rules)
    if cmd.learn is not None:
        rules.append(("learn", cmd.learn))
    policy = load_policy(rule_file, cli_rules=rules, environ=os.environ, cwd=cwd)
    check_lock(policy, learning_requested=False, rule_file_missing=not exists)
    learn_output: str | None = None
    if cmd.audit:
        mode = "audit"
    elif cmd.learn is not None or policy.learn.value or not exists:
        mode = "learn"
        learn_output = str(policy.learn.value or rule_file)
    else:
        mode = "enforce"
    return RunPlan(cmd, cwd, policy, rule_file, exists, mode, learn_output)


def learning_session_class() -> Any:
    """``LearningSession``, or ``None`` when this version has no learning mode."""

    try:
        from pysandboxes.learn.session import LearningSession
    except ImportError as exc:
        if exc.name is not None and not exc.name.startswith("pysandboxes.learn"):
            raise
        return None
    return LearningSession


def _refuse_without_learning(plan: RunPlan) -> None:
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


def _prefixes() -> tuple[str, ...]:
    """The interpreter's installation and site directories (readable by default, SPEC §3.1)."""

    found: list[str] = []
    for path in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        if path and path not in found:
            found.append(path)
    for entry in sys.path:
        if entry and ("site-packages" in entry or "dist-packages" in entry) and entry not in found:
            found.append(entry)
    src = _src_dir()
    if src not in found:
        found.append(src)
    return tuple(found)


def _src_dir() -> str:
    """The directory that holds the ``pysandboxes`` package."""

    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _banner(plan: RunPlan, *, quiet: bool) -> str:
    from pysandboxes.policy.model import display_path

    python_layer = "on" if plan.policy.py_sandbox.value else "off"
    if plan.mode == "learn":
        what = "LEARNING session (everything the program does is allowed and recorded)"
    elif plan.mode == "audit":
        what = "AUDIT session (nothing refused; what the rules would refuse is reported)"
    else:
        what = "sandboxed session"
    rules = display_path(plan.rule_file) if plan.rule_file_exists else "(no rule file)"
    line = (
        f"{PROG}: {what}: rules {rules}, os-sandbox={plan.provider_name}, "
        f"Python layer {python_layer}\n"
    )
    if quiet:
        return line
    head = f"Python {sys.version} on {sys.platform}\n"
    if "-S" not in plan.cmd.python_options:
        head += 'Type "help", "copyright", "credits" or "license" for more information.\n'
    return head + line


def _use_ipython(plan: RunPlan) -> bool:
    """IPython for the REPL when it is installed and ``python-import`` allows it."""

    import importlib.util

    if importlib.util.find_spec("IPython") is None:
        return False
    if not plan.policy.py_sandbox.value or plan.mode != "enforce":
        return True
    from pysandboxes.policy.decide import import_allowed

    return import_allowed(plan.policy, "IPython")


def run(cmd: CommandLine, adjust: Callable[[RunPlan], RunPlan] | None = None) -> int:
    """Run the program of ``cmd`` under its rules; the exit status (or never, after exec).

    ``adjust``: an entry point's own step on the plan before anything is prepared (the Jupyter
    kernel adds the rules of its connection file, with their own origin: integrations/kernel.py).
    """

    cwd = current_directory()
    if cmd.kind == "repl" and "-i" not in cmd.python_options and not os.isatty(0):
        cmd.kind = "stdin"  # `python < file`: stdin is the program, sys.argv == ['']
    plan = plan_run(cmd, cwd)
    if adjust is not None:
        plan = adjust(plan)
    session_class = None
    if plan.mode != "enforce":
        session_class = learning_session_class()
        if session_class is None:
            _refuse_without_learning(plan)

    from pysandboxes.errors import ConfigError, ConfigProblem, ProviderUnavailableError
    from pysandboxes.launch import tmpdir as tmp
    from pysandboxes.policy.decide import build_environment
    from pysandboxes.providers import get_provider
    from pysandboxes.runtime import RunContext

    if cmd.denials is not None:
        _check_denials_file(cmd.denials)
    name = plan.provider_name
    where = str(plan.policy.os_sandbox.origin or "<default>") if plan.mode == "enforce" else "<arg>"
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
    if name == "none":
        from pysandboxes.providers.none import IN_PROCESS_OPTIONS

        refused = [
            o for o in cmd.python_options if o.startswith("-") and o not in IN_PROCESS_OPTIONS
        ]
        if refused:
            message = (
                "os-sandbox=none runs the program in python-sb's own interpreter, which has "
                f"already started: {' '.join(refused)} cannot be applied (use "
                "os-sandbox=subprocess)"
            )
            raise ConfigError([ConfigProblem("<arg>", message)])

    judged = bool(plan.policy.py_sandbox.value) or provider.kernel
    if plan.mode == "enforce" and cmd.kind == "script" and cmd.program and judged:
        # One behaviour under every provider (SPEC 5.2, issue 11 point 8): a script its rules
        # do not let the sandbox read is refused here, naming the rule to add.
        from pysandboxes.providers.limits import check_script

        refusal = check_script(plan.policy, cmd.program, _prefixes())
        if refusal is not None:
            from pysandboxes.policy.model import display_path

            raise ConfigError([ConfigProblem(display_path(plan.rule_file), refusal.text)])
    if plan.mode == "enforce":
        env = build_environment(plan.policy, os.environ)
    else:
        # Learning and audit enforce nothing: the program gets python-sb's whole environment,
        # and the guard records which variables it reads (learned as env= lines, or reported
        # when the rules would not pass them).
        env = dict(os.environ)
        env.pop("TMPDIR", None)
    base = tmp.base_directory(os.environ)
    tmp.sweep(base)
    tmpdir = tmp.create(base)
    try:
        env.setdefault("TMPDIR", tmpdir)
        program = cmd.program
        if cmd.kind == "script" and program is not None:
            program = os.path.abspath(program)
        session = None
        if session_class is not None:
            session = session_class(
                plan.policy,
                mode=plan.mode,
                output=plan.learn_output,
                cwd=cwd,
                program_kind=cmd.kind,
                program=program,
                denials_file=_abs(cmd.denials),
                tmpdir=tmpdir,
                prefixes=_prefixes(),
            )
        context = RunContext(
            mode=plan.mode,  # type: ignore[arg-type]
            provider=name,
            cwd=cwd,
            tmpdir=tmpdir,
            program_kind=cmd.kind,  # type: ignore[arg-type]
            program=program,
            python=sys.executable,
            prefixes=_prefixes(),
            record_fd=session.child_fd() if session is not None else -1,
            denials_file=_abs(cmd.denials),
        )
        arm = bool(plan.policy.py_sandbox.value) or plan.mode != "enforce"
        fields = _child_fields(plan, cmd, arm=arm, tmpdir=tmpdir, env=env)
        guard_policy = plan.policy
        if arm and plan.policy.net:
            from pysandboxes.policy.netrules import pin_deny_names

            # The Python layer denies the addresses of DENY names too, resolved once, now.
            guard_policy = pin_deny_names(plan.policy)
        if name == "none":
            from pysandboxes.launch.inprocess import run_in_process

            if not plan.policy.py_sandbox.value:  # (the limits table only then: start-up)
                from pysandboxes.providers.limits import no_enforcer

                for item in no_enforcer(plan.policy, plan.mode):
                    sys.stderr.write(f"{PROG}: none, py-sandbox=false: {item.text}\n")
            _state.program_started = True
            return run_in_process(
                fields,
                [*cmd.python_words, *cmd.args],
                policy=guard_policy,
                context=context,
                env=env,
                options=cmd.python_options,
            )
        return _launch(plan, cmd, provider, context, env, fields, session, guard_policy)
    except BaseException:
        tmp.remove_tree_safely(tmpdir)
        raise


def _check_denials_file(path: str) -> None:
    """``--denials=FILE`` must be appendable before anything runs (created empty if absent),
    rather than refusals being lost silently."""

    from pysandboxes.errors import ConfigError, ConfigProblem

    target = _abs(path) or path
    try:
        with open(target, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        message = f"--denials={path}: cannot be written: {exc.strerror or exc}"
        raise ConfigError([ConfigProblem("<arg>", message)]) from None


def _abs(path: str | None) -> str | None:
    return None if path is None else os.path.abspath(os.path.expanduser(path))


def _child_fields(
    plan: RunPlan, cmd: CommandLine, *, arm: bool, tmpdir: str, env: dict[str, str]
) -> dict[str, str]:
    """The run description the bootstrap reads (see ``child.py``)."""

    fields = {
        "kind": cmd.kind,
        "program": cmd.program or "",
        "x": "1" if cmd.skip_first_line else "0",
        "tmpdir": tmpdir,
        "arm": "1" if arm else "0",
        "n_words": str(len(cmd.python_words)),
    }
    profile = _portable_profile()
    if profile:  # the test switch reaches the child's guard too (platform_caps.adopt)
        fields["portable"] = profile
    if cmd.kind == "stdin" and cmd.no_program:
        fields["argv0"] = ""
    if "-i" in cmd.python_options or cmd.kind == "repl":
        fields["inspect_prompt"] = "1"
    if cmd.kind == "repl":
        fields["banner"] = _banner(plan, quiet="-q" in cmd.python_options)
        isolated = "-E" in cmd.python_options or "-I" in cmd.python_options
        startup = env.get("PYTHONSTARTUP", "")
        if startup and not isolated:
            fields["startup"] = startup
        if os.isatty(0) and _use_ipython(plan):
            fields["ipython"] = "1"
    return fields


def _portable_profile() -> str:
    """The forced profile of ``PYSANDBOXES_PORTABLE`` (tests only), without importing
    ``platform_caps`` on the usual path."""

    if not os.environ.get("PYSANDBOXES_PORTABLE"):
        return ""
    from pysandboxes.platform_caps import CAPS

    return CAPS.profile


def _policy_fd(data: bytes) -> int:
    """An inheritable descriptor holding ``data`` (a memfd; an unlinked file where there is
    none), read from offset 0 by the child."""

    try:
        fd: int = os.memfd_create("pysandboxes-run", os.MFD_CLOEXEC)  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):
        import tempfile

        fd, path = tempfile.mkstemp(prefix="pysb-run-")
        os.unlink(path)
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    os.set_inheritable(fd, True)
    return fd


def _launch(
    plan: RunPlan,
    cmd: CommandLine,
    provider: Any,
    context: RunContext,
    env: dict[str, str],
    fields: dict[str, str],
    session: Any,
    guard_policy: Policy,
) -> int:
    """Exec the sandboxed interpreter, or supervise it when a parent must stay.

    ``guard_policy``: what the Python layer gets (``plan.policy`` with the addresses of its
    DENY names, ``policy.netrules.pin_deny_names``); the provider gets ``plan.policy``."""

    from pysandboxes.launch.channel import Channel
    from pysandboxes.launch.wire import bootstrap_args, encode_run, guard_data
    from pysandboxes.platform_caps import CAPS
    from pysandboxes.providers.base import Launch

    words = [*cmd.python_words, *cmd.args]
    # The policy and the run context are for the guard: a run without it does not encode them.
    data = guard_data(context, guard_policy) if fields["arm"] == "1" else b""
    payload = encode_run(fields, words, data)
    # Where exec does not replace the process (Windows; PYSANDBOXES_PORTABLE=spawn), python-sb
    # starts the program and stays as its parent (docs/security-model.md, Platforms).
    spawn = session is not None or not CAPS.exec
    channel = Channel(payload, spawn=spawn)
    options = list(cmd.python_options)
    if cmd.kind == "repl" and fields.get("ipython") != "1" and "-i" not in options:
        options.append("-i")  # the native REPL starts when the bootstrap returns
    child_argv = (sys.executable, *options, *bootstrap_args(channel.token))
    inherited = (channel.fd,) if channel.handle < 0 else ()
    pass_fds = inherited if context.record_fd < 0 else (*inherited, context.record_fd)
    launch = Launch(
        policy=plan.policy,
        context=context,
        child_argv=child_argv,
        env=env,
        pass_fds=pass_fds,
        cwd=plan.cwd,
    )
    try:
        prepared: Prepared = provider.prepare(launch)
    except BaseException:
        channel.close()
        raise
    for warning in prepared.warnings:
        sys.stderr.write(f"{PROG}: {warning}\n")
    if spawn or prepared.needs_parent:
        _state.program_started = True
        return _supervise(prepared, session, context, channel)
    # Until execve succeeds nothing has run: a failure here is reported as a refusal.
    sys.stdout.flush()
    sys.stderr.flush()
    for step in prepared.pre_exec:
        step()
    channel.before_exec()
    os.execve(prepared.argv[0], prepared.argv, prepared.env)
    raise AssertionError("unreachable")


def _supervise(prepared: Prepared, session: Any, context: RunContext, channel: Any) -> int:
    from pysandboxes.launch.supervisor import supervise
    from pysandboxes.launch.tmpdir import remove_tree_safely

    def remove_tmpdir(_status: int | None) -> None:
        if context.tmpdir:  # written by the program: walked without following symlinks
            remove_tree_safely(context.tmpdir)

    on_exit = [session.finish] if session is not None else []
    on_exit.append(remove_tmpdir)
    return supervise(
        prepared,
        on_start=session.start if session is not None else None,
        on_exit=on_exit,
        channel=channel,
    )
