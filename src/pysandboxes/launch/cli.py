"""``python-sb``: the command line entry point (console script ``pysandboxes.launch.cli:main``).

One run: split the command line (:mod:`pysandboxes.launch.argv`), locate and load the rule file,
choose the mode (enforce, learn, audit) and the provider, build the child's environment and
private temporary directory, then either ``exec`` the sandboxed interpreter (the usual case: no
process stays behind), stay as its supervisor (learning, audit, a provider that needs a parent),
or run the program in this very interpreter (``os-sandbox=none``).

Sub-commands are spelled as options before the program, ``python-sb --<verb>``
(``--explain``, ``--review``, ``--hook``...), so no script name can collide with them.

Start-up time matters (DESIGN decision 7): only ``os`` and ``sys`` are imported at module level;
everything else is imported where it is needed.
"""

from __future__ import annotations

import os
import sys

from pysandboxes.launch.argv import (
    PROG,
    CommandLine,
    UsageError,
    parse,
    subcommand_of,
    usage_text,
)

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable

    from pysandboxes.policy.model import Policy

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run ``python-sb`` with ``argv`` (default ``sys.argv[1:]``); the exit status.

    The program's own exit does not always return here: after ``exec`` python-sb is the program.
    """

    words = sys.argv[1:] if argv is None else list(argv)
    if subcommand_of(words) is not None:
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
    from pysandboxes.launch.interpreter import pause_collector, settle_heap, start_unit

    pause_collector()  # python-sb's own start, in its own process (launch/interpreter.py)
    start_unit("launcher")  # the rest of the start's modules from one file (launch/unit.py)
    try:
        return run_command(cmd)
    finally:
        settle_heap(freeze=False)  # a run that ended without a program; else nothing left


def run_command(cmd: CommandLine, adjust: Callable[[RunPlan], RunPlan] | None = None) -> int:
    """Run (or ``--explain``) the parsed command line ``cmd``, a refused configuration reported
    (exit status 2); ``adjust`` as for :func:`run`."""

    from pysandboxes.errors import ConfigError

    try:
        if cmd.action == "explain":
            tool = __import__(EXPLAIN, fromlist=("explain",))  # a layer above: by name
            plan = plan_run(cmd, current_directory())
            status: int = tool.explain(plan if adjust is None else adjust(plan), as_json=cmd.json)
            return status
        return run(cmd, adjust)
    except ConfigError as exc:
        if _state.program_started and _in_process_program_running():
            raise  # the program's own (os-sandbox=none), already reported as CPython does
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


def _in_process_program_running() -> bool:
    """Whether the program of an ``os-sandbox=none`` run has started in this interpreter."""

    inprocess = sys.modules.get("pysandboxes.launch.inprocess")
    return inprocess is not None and bool(inprocess.PROGRAM_RUNNING[0])


class _State:
    """Whether the program has started (after that, its exceptions are its own)."""

    program_started = False


_state = _State()


#: The module of each sub-command of ``argv.SUBCOMMANDS``: ``python-sb --VERB ...`` as the
#: first word hands the rest to ``pysandboxes.tools.VERB.main(words) -> int``; a dotted value
#: names the module itself. These modules are of the layers above ``launch`` (``tools``,
#: ``integrations``): loaded by name when asked for, never imported by this package
#: (docs/architecture.md, Layers; ``tests/unit/test_layers.py`` checks each name).
TOOLS = {
    "--review": "review",
    "--check": "check",  # not built: `python-sb --check` says so (docs name no --check)
    "--hook": "pysandboxes.integrations.hook",
    "--install-hook": "pysandboxes.integrations.install",
    "--uninstall-hook": "pysandboxes.integrations.uninstall",
    "--providers": "providers",
    "--export": "export",
    # The sandboxed Jupyter kernel (docs/kernel.md)
    "--kernel": "pysandboxes.integrations.kernel",
    "--install-kernel": "pysandboxes.integrations.kernel_install",
    "--uninstall-kernel": "pysandboxes.integrations.kernel_uninstall",
    "--notebook": "pysandboxes.integrations.kernel_notebook",
}


#: ``--explain`` (parsed with the arguments of a run): its module, loaded by name as TOOLS's.
EXPLAIN = "pysandboxes.tools.explain"


def run_tool(option: str, words: list[str]) -> int:
    """Run the sub-command ``option`` (``--review``, ``--hook``...) with ``words``."""

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
        f"       {PROG} --providers [--json]   (which providers run here; docs/containers.md)\n"
        f"       {PROG} --export=kubernetes|agent-sandbox --image=IMAGE [...] [same arguments "
        "as a run]   (docs/kubernetes.md)\n"
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
    check_lock(
        policy, learning_requested=False, rule_file_missing=not exists, audit_requested=cmd.audit
    )
    if policy.acknowledge:
        _check_acknowledged(policy)
    learn_output: str | None = None
    if cmd.audit:
        mode = "audit"
    elif cmd.learn is not None or policy.learn.value or not exists:
        mode = "learn"
        learn_output = str(policy.learn.value or rule_file)
    else:
        mode = "enforce"
    return RunPlan(cmd, cwd, policy, rule_file, exists, mode, learn_output)


def _check_acknowledged(policy: Policy) -> None:
    """Every ``acknowledge=`` id names an announced limit of the providers' table (the policy
    layer checks only how an id is written: it does not import the providers)."""

    from pysandboxes.errors import ConfigError, ConfigProblem
    from pysandboxes.providers.limits import acknowledge_problem

    problems = []
    for rule in policy.acknowledge:
        message = acknowledge_problem(rule.name)
        if message:
            problems.append(ConfigProblem(str(rule.origin), message, rule.origin.sort_key))
    if problems:
        raise ConfigError(problems)


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

    ``adjust``: an entry point's own step on the plan before anything starts (the Jupyter
    kernel adds the rules of its connection file, with their own origin: integrations/kernel.py).

    The start itself is ``launch/start.py``'s, the one start path of every entry point; what
    is the command line's own here: the kind of a program-less run, the REPL's fields, and
    which of the ways to run it applies."""

    from pysandboxes.launch import start as starting

    cwd = current_directory()
    if cmd.kind == "repl" and "-i" not in cmd.python_options and not os.isatty(0):
        cmd.kind = "stdin"  # `python < file`: stdin is the program, sys.argv == ['']
    plan = plan_run(cmd, cwd)
    if adjust is not None:
        plan = adjust(plan)
    if plan.mode != "enforce":
        status = _no_program(cmd, cwd)
        if status:  # a run that runs nothing learns nothing (no rule file written)
            return status
    request = starting.Request(
        cmd.kind,
        cmd.program,
        args=cmd.args,
        python_options=cmd.python_options,
        python_words=cmd.python_words,
        skip_first_line=cmd.skip_first_line,
        fields=_command_line_fields(plan, cmd),
        denials=cmd.denials,
    )
    start = starting.prepare(plan, request)
    if start.provider.in_process:
        _state.program_started = True  # from here on, an exception is the program's own
        try:
            return start.run_in_process()
        except BaseException:
            start.abandon()
            raise
    if start.needs_parent:
        _state.program_started = True
        return start.supervise()
    try:  # until execve succeeds nothing has run: a failure here is reported as a refusal
        return start.exec()
    except BaseException:
        start.abandon()
        raise


def _no_program(cmd: CommandLine, cwd: str) -> int:
    """For a learning or audit run: when the script cannot be opened or the ``-m`` module does
    not exist, say so as CPython does and return its exit status (2, 1); else 0.

    Checked before the learning session starts, so that nothing is learned of a program that
    never ran (a learned ``expose-ro=.`` for a typo). Not under ``-i``, where CPython reports
    the error and starts the REPL anyway."""

    if "-i" in cmd.python_options or not cmd.program:
        return 0
    if cmd.kind == "script":
        path = os.path.join(cwd, cmd.program)
        if os.path.isdir(path):
            return 0
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            err = f"[Errno {exc.errno}] {exc.strerror}" if exc.errno else str(exc)
            sys.stderr.write(f"{PROG}: can't open file {os.path.abspath(path)!r}: {err}\n")
            return 2
    elif cmd.kind == "module":
        from pysandboxes.policy.locate import module_not_found

        safe = "-I" in cmd.python_options or "-P" in cmd.python_options
        search = sys.path[1:] if safe else [cwd, *sys.path[1:]]
        if module_not_found(cmd.program, search):
            sys.stderr.write(f"{PROG}: No module named {cmd.program}\n")
            return 1
    return 0


def _command_line_fields(plan: RunPlan, cmd: CommandLine) -> dict[str, str]:
    """The run description's fields of the command line's own kinds (``child.py``)."""

    fields: dict[str, str] = {}
    if cmd.kind == "stdin" and cmd.no_program:
        fields["argv0"] = ""
    if "-i" in cmd.python_options or cmd.kind == "repl":
        fields["inspect_prompt"] = "1"
    if cmd.kind == "repl":
        fields["banner"] = _banner(plan, quiet="-q" in cmd.python_options)
        if os.isatty(0) and _use_ipython(plan):
            fields["ipython"] = "1"
    return fields
