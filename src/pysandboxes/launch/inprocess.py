"""``os-sandbox=none``: run the program in python-sb's own interpreter.

No interpreter is exec'd: the environment is replaced in-process, the CPython options that still
mean something after start-up are applied (``-B``, ``-W``, ``-u``, ``-q``, ``-i``, ``-x``; the
others are refused by the launcher), the guard is armed here, and the program runs with the
same :class:`~pysandboxes.launch.child.Program` semantics as in a child interpreter. The REPL is
the ``code`` module's, with a compiler and error display that keep working under the guard.
See ``docs/providers/none.md`` for what this provider does not give.
"""

from __future__ import annotations

import os
import sys

from pysandboxes.launch.child import (
    Program,
    eval_extension,
    flush_std,
    program_begins,
    program_compiler,
    register_tmpdir_cleanup,
    report_uncaught,
    run_startup,
    set_orig_argv,
    set_path0,
    start_ipython,
    trusted_path,
)

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from types import CodeType
    from typing import Any

__all__ = ["run_in_process", "scrub_initial_environment"]


def _apply_in_process_options(options: list[str]) -> None:
    """Apply the CPython options that still mean something after start-up (``none``)."""

    warn: list[str] = []
    i = 0
    while i < len(options):
        option = options[i]
        if option == "-W":
            warn.append(options[i + 1])
            i += 2
            continue
        if option == "-B":
            sys.dont_write_bytecode = True
        elif option == "-u":
            import io

            for name in ("stdout", "stderr"):
                stream = getattr(sys, name)
                raw = io.FileIO(stream.fileno(), "w", closefd=False)
                setattr(
                    sys,
                    name,
                    io.TextIOWrapper(
                        raw, encoding=stream.encoding, errors=stream.errors, write_through=True
                    ),
                )
        i += 1
    if warn:
        import warnings

        sys.warnoptions.extend(warn)
        warnings._processoptions(warn)  # type: ignore[attr-defined]


def _preload_console() -> None:
    """Import what the in-process REPL needs, before the guard is armed."""

    import code  # noqa: F401

    try:  # noqa: SIM105
        import readline  # noqa: F401  (line editing and history for input())
    except ImportError:
        pass


def _interact(banner: str) -> None:
    """The REPL of an in-process run (``-i``, or no program): ``code`` with readline."""

    import code

    class Console(code.InteractiveConsole):
        def raw_input(self, prompt: str = "") -> str:
            if sys.stdin.isatty():
                return input(prompt)
            # Like CPython's REPL without a terminal: the prompt goes to stderr.
            sys.stderr.write(prompt)
            sys.stderr.flush()
            line = sys.stdin.readline()
            if not line:
                raise EOFError
            return line.rstrip("\n")

        # Errors are printed by sys.excepthook (by default CPython's own, in C) rather than by
        # the traceback module, which walks every frame in Python: the armed guard refuses
        # reading its own frames, where a refusal was raised.
        def showtraceback(self) -> None:
            etype, value, tb = sys.exc_info()
            if etype is None or value is None:
                return
            tb = tb.tb_next if tb is not None else None  # the console's own exec() frame
            value.__traceback__ = tb
            sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
            sys.excepthook(etype, value, tb)

        def showsyntaxerror(self, filename: str | None = None) -> None:
            etype, value, _tb = sys.exc_info()
            if etype is None or value is None:
                return
            value.__traceback__ = None  # where it was compiled is the console's business
            sys.last_type, sys.last_value, sys.last_traceback = etype, value, None
            sys.excepthook(etype, value, None)

    console = Console(sys.modules["__main__"].__dict__)
    console.compile = _console_compile  # type: ignore[assignment]
    console.interact(banner=banner, exitmsg="")


#: compile() flags: keep an indented block open until a blank line; report incomplete input.
_DONT_IMPLY_DEDENT = 0x200
_ALLOW_INCOMPLETE_INPUT = 0x4000


def _console_compile(
    source: str, filename: str = "<console>", symbol: str = "single"
) -> CodeType | None:
    """The console's compiler: a code object, ``None`` while the input is incomplete.

    In place of ``codeop``, whose warning filters look ``warnings`` up in ``sys.modules``, where
    the armed guard may have taken it out (it judges the program's own ``import warnings``).
    """

    if all(not line.strip() or line.lstrip().startswith("#") for line in source.split("\n")):
        source = "pass"  # blank lines and comments only: nothing to run
    flags = _DONT_IMPLY_DEDENT | _ALLOW_INCOMPLETE_INPUT
    try:
        code: CodeType = compile(source, filename, symbol, flags)
    except SyntaxError:
        pass
    else:
        return code
    try:  # one more line could complete it (an open block waits for a blank line)
        compile(source + "\n", filename, symbol, flags)
    except SyntaxError as exc:
        if "incomplete input" in str(exc):
            return None
    else:
        return None
    # A plain error: compile again without the "incomplete" allowance, for CPython's message.
    final: CodeType = compile(source, filename, symbol, _DONT_IMPLY_DEDENT)
    return final


def scrub_initial_environment() -> str | None:
    """Overwrite the environment block this process was started with; ``None`` or why not.

    ``os.environ.clear()`` removes the variables from the C library's ``environ``, but the
    strings the kernel copied at ``exec`` stay where they were, and ``/proc/self/environ`` shows
    them. Once ``environ`` no longer points there, the block is zeroed through
    ``/proc/self/mem`` (allowed on one's own process), so a secret that was not granted is gone
    from the process, not just hidden. Linux only; best effort, and said when it fails.
    """

    try:
        with open("/proc/self/stat", "rb") as handle:
            stat = handle.read()
        fields = stat[stat.rindex(b")") + 2 :].split()
        start, end = int(fields[47]), int(fields[48])  # env_start, env_end (proc(5) 50, 51)
        if end <= start:
            return None
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            mem.write(b"\0" * (end - start))
    except (OSError, ValueError, IndexError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


#: python-sb's own ``__main__`` module, kept referenced during an in-process run.
_LAUNCHER_MAIN: list[Any] = []

#: ``[True]`` once the program's own code may run (the guard armed, the program loaded): from
#: then on an exception is the program's, never a refused configuration (``launch/cli.py``).
PROGRAM_RUNNING: list[bool] = [False]


def _load_in_process(program: Program, *, inspect: bool) -> BaseException | None:
    """:func:`load_program` for ``none``, where ``-i`` is python-sb's option, not a flag."""

    try:
        program.load()
    except SystemExit as exc:
        if not inspect:
            raise
        return exc
    except Exception as exc:
        return exc
    return None


def run_in_process(
    fields: dict[str, str],
    args: list[str],
    *,
    policy: Any,
    context: Any,
    env: dict[str, str],
    options: list[str],
) -> int:
    """Run the program in this interpreter (``os-sandbox=none``); its exit status.

    ``SystemExit`` and uncaught exceptions leave through the caller as they would leave a plain
    ``python`` (the exception is printed here, without python-sb's frames, then re-raised).
    """

    import types

    os.environ.clear()
    os.environ.update(env)
    from pysandboxes.platform_caps import CAPS

    if CAPS.proc:  # elsewhere no /proc shows the start-up block (docs/providers/none.md)
        problem = scrub_initial_environment()
        if problem is not None:
            sys.stderr.write(
                "python-sb: os-sandbox=none: the start-up environment could not be cleared "
                f"(/proc/self/environ still shows it): {problem}\n"
            )
    tmpdir = fields.get("tmpdir", "")
    if tmpdir:
        register_tmpdir_cleanup(tmpdir)
    _apply_in_process_options(options)
    args = set_orig_argv(fields, args)
    program = Program(
        fields["kind"], fields.get("program", ""), args, skip_first_line=fields.get("x") == "1"
    )
    sys.argv[:] = program.argv(fields.get("argv0"))
    sys._pysandboxes_child = program.kind  # type: ignore[attr-defined]  # is_in_sandbox()
    own_isolated = bool(sys.flags.isolated or getattr(sys.flags, "safe_path", 0))
    saved_path = sys.path[:] if own_isolated else sys.path[1:]  # drop python-sb's own entry
    # The program gets a fresh __main__; python-sb's own (the console script, still running)
    # must stay alive: CPython 3.11's file runner holds only a borrowed reference to it, and
    # freeing it under the running script corrupts memory at exit.
    _LAUNCHER_MAIN.append(sys.modules["__main__"])
    sys.modules["__main__"] = types.ModuleType("__main__")
    src_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path[:] = trusted_path(src_dir)
    if fields.get("arm") == "1":
        program.compiler = program_compiler(context.accelerator)
    inspect = "-i" in options
    load_error = _load_in_process(program, inspect=inspect)
    if inspect or program.kind == "repl":
        _preload_console()
    if fields.get("arm") == "1":
        from pysandboxes.launch import unit

        # The guard's modules this process has not loaded yet, from the child's unit.
        with unit.installed(os.path.join(src_dir, "pysandboxes")):
            from pysandboxes.guard import arm  # type: ignore[attr-defined,unused-ignore]

            arm(policy, context, eval_extension(policy, context.mode))
    set_path0(program, isolated=own_isolated, saved_path=saved_path)
    program.prepare_main()
    program_begins()
    PROGRAM_RUNNING[0] = True
    if inspect or program.kind == "repl":
        sys.ps1 = fields.get("ps1", "[sb] >>> ")
        sys.ps2 = fields.get("ps2", "[sb] ... ")
    if load_error is not None:
        if not isinstance(load_error, SystemExit):
            report_uncaught(load_error)
            if not inspect:
                raise load_error
            sys.excepthook = sys.excepthook.previous  # type: ignore[attr-defined]
        flush_std()
        _interact("")
        return 0
    if program.kind == "repl":
        if fields.get("ipython") == "1":
            start_ipython(fields)
            return 0
        startup = fields.get("startup", "")
        if startup:
            run_startup(startup)
        _interact(fields.get("banner", ""))
        return 0
    try:
        program.run()
    except SystemExit as exc:
        if not inspect:
            raise
        report_uncaught(exc)
        sys.excepthook = sys.excepthook.previous  # type: ignore[attr-defined]
    except BaseException as exc:
        report_uncaught(exc)
        if not inspect:
            raise
        sys.excepthook = sys.excepthook.previous  # type: ignore[attr-defined]
    if inspect:
        flush_std()
        _interact("")
    return 0
