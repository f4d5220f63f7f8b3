"""The bootstrap that runs inside the sandboxed interpreter, before and around the program.

The launcher starts ``python [python options] boot.py CHILD FD SRC`` (``launch/boot.py``); the
bootstrap loads this file *by path* (not as ``pysandboxes.launch.child``) so that a run which
does not arm the Python layer imports nothing of the package, and nothing heavier than ``os``
and ``sys``. It then:

1. reads the run description from an inherited descriptor (a memfd written by the parent) and
   closes that descriptor;
2. sets ``sys.argv``, ``sys.orig_argv`` and ``sys.path[0]`` as CPython would have for the program;
3. loads the program's code (a script, ``-c`` code or stdin) -- before the guard is armed, since
   that code is what the user asked to run;
4. arms the Python layer (``pysandboxes.guard.arm``) when the policy or the mode asks for it;
5. runs the program in ``__main__`` with CPython's semantics, showing tracebacks without the
   bootstrap's own frames.

``pysandboxes.launch.inprocess`` reuses its pieces to run a program in python-sb's own process
for ``os-sandbox=none``.

The wire format is described in ``pysandboxes.launch.wire`` (the parent's half, which also
builds the bootstrap). The header is split here without any module; the guard's part (the
RunContext and the policy as plain data, ``marshal``-encoded) is decoded only when the guard is
armed, and checked to hold nothing but plain data. Never a pickle (DESIGN decision 1).
"""

import atexit  # built-in, like os and sys: registered at the program's start (program_begins)
import os
import sys

# Not ``typing.TYPE_CHECKING``: importing ``typing`` would cost every child more than all of this
# bootstrap (it pulls ``re``, ``functools``, ``collections``...). Type checkers know the name.
# No ``from __future__ import annotations`` either (one more module to load in every child):
# annotations naming these types are strings.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType, TracebackType
    from typing import Any, NoReturn

if __name__ == "pysandboxes.launch.child":  # the command line's process (inprocess, none)
    from pysandboxes.launch.interpreter import installation_dirs, pause_collector, settle_heap

    _load_beside = None
else:  # the bootstrap's copy, loaded by path: so are interpreter.py and unit.py (the package
    # stays unloaded until the guard is imported)
    _load_beside = sys.modules["__main__"].load_beside  # launch/boot.py, which loaded this file
    _interpreter = _load_beside(__file__, "interpreter")
    installation_dirs = _interpreter.installation_dirs
    pause_collector = _interpreter.pause_collector
    settle_heap = _interpreter.settle_heap

#: Must match ``pysandboxes.launch.wire.FORMAT`` (not imported: see the module docstring).
FORMAT = "pysb-run-2"
ARGS_MARK = "--args--"

#: The program kinds of the API (``launch/start.WORKER_KINDS``): a partial-mode worker, and
#: guarded evaluation's (a partial-mode worker whose channel the eval protocol takes over).
WORKER_KINDS = ("worker", "eval-worker")

#: Modules of the layers above ``launch`` that the child loads by name (docs/architecture.md,
#: Layers; ``tests/unit/test_layers.py`` checks each): the call loop of the worker kinds
#: (``prepare(fields) -> Server``), and the eval-* extension the guard is handed
#: (``guard.arm(..., eval_extension=)``).
EXTENSIONS = {
    "worker": "pysandboxes.partial.worker",
    "eval": "pysandboxes.evalguard.extension",
}

#: Files whose frames are the launcher's, stripped from the program's tracebacks.
_LAUNCHER_FILES = {
    __file__,
    *(
        __file__.replace("child.py", f)
        for f in ("cli.py", "inprocess.py", "boot.py", "interpreter.py")
    ),
}

#: CPython shows the source of ``-c`` code in tracebacks from 3.13: it registers the command
#: with ``linecache`` under ``<string>`` before running it. The one place python-sb follows the
#: version: nothing in the interpreter announces the behaviour before a ``-c`` run, and the
#: bootstrap is not one (``launch/boot.py``).
SHOWS_C_SOURCE = sys.version_info >= (3, 13)


# -- wire format -----------------------------------------------------------------------------------


def decode_run(data: bytes) -> tuple[dict[str, str], list[str], bytes]:
    """Inverse of ``wire.encode_run``: (fields, program args, guard data)."""

    size, _, rest = data.partition(b"\n")
    end = int(size)
    items = rest[:end].decode("utf-8", "surrogateescape").split("\0")
    if not items or items[0] != FORMAT:
        raise RuntimeError("python-sb: launch data of an unknown format")
    mark = items.index(ARGS_MARK)
    pairs = items[1:mark]
    fields = dict(zip(pairs[0::2], pairs[1::2], strict=True))
    return fields, items[mark + 1 :], rest[end:]


def open_channel(token: "int | str") -> int:
    """The descriptor of the hand-over: ``token`` is one (POSIX), or ``"hN"``, an inherited
    Windows handle ``N`` (``launch/channel.py``)."""

    if isinstance(token, int):
        return token
    if token.isdigit():  # from the command line (launch/boot.py)
        return int(token)
    if sys.platform == "win32" and token.startswith("h"):  # the type checker's narrowing
        import msvcrt

        return msvcrt.open_osfhandle(int(token[1:]), os.O_RDONLY)
    raise RuntimeError(f"python-sb: launch data from an unknown channel {token!r}")


def _read_fd(fd: int) -> bytes:
    """Everything in ``fd``: a memfd from its start, a pipe to its end."""

    chunks = []
    try:  # noqa: SIM105 (no contextlib import in the child)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:  # a pipe (ESPIPE): read as it comes
        pass
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


# -- temporary directory -------------------------------------------------------------------------


def remove_tree(path: str) -> None:
    """Remove ``path`` and everything below it, never following symlinks; errors are ignored.

    The child's clean-up at exit: every operation names an absolute path inside the private
    temporary directory, so that the guard judges (and learning records) exactly that, which
    the defaults grant. Written with ``os`` alone: at interpreter exit the guard would judge a
    late ``import shutil`` as the program's import. The parent, which runs with the user's
    full rights, uses ``tmpdir.remove_tree_safely`` instead.
    """

    if os.path.islink(path):
        try:  # noqa: SIM105
            os.unlink(path)
        except OSError:
            pass
        return
    try:
        entries = list(os.scandir(path))
    except OSError:
        entries = []
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                remove_tree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            pass
    try:  # noqa: SIM105 (contextlib would be one more import in every child)
        os.rmdir(path)
    except OSError:
        pass


def register_tmpdir_cleanup(tmpdir: str) -> None:
    owner = os.getpid()

    def cleanup() -> None:
        # A forked child that exits normally must not remove its parent's directory.
        if os.getpid() == owner:
            remove_tree(tmpdir)

    atexit.register(cleanup)


# -- tracebacks ----------------------------------------------------------------------------------


def _strip(tb: "TracebackType | None") -> "TracebackType | None":
    """Drop the launcher's leading frames from ``tb`` (the program's frames stay).

    Only leading frames: the guard refuses reading its own frames (``tb_frame``), so frames
    where a refusal was raised are the guard's to present.
    """

    while tb is not None and tb.tb_frame.f_code.co_filename in _LAUNCHER_FILES:
        tb = tb.tb_next
    return tb


#: The ``pysandboxes`` package directory: frames of its code are python-sb's, not the program's.
_PACKAGE_PREFIX = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _not_programs(tb: "TracebackType", import_code: object) -> bool:
    """Whether the frame of ``tb`` is python-sb's rather than the program's: code of the
    ``pysandboxes`` package, or the installed ``builtins.__import__`` when it is Python code
    (the Python layer's import check, which sits where CPython's C import function would be,
    and so shows no frame in a plain traceback). A frame that cannot be read (the guard
    refuses its own running frames) is the guard's."""

    try:
        code = tb.tb_frame.f_code
    except Exception:
        return True
    return code is import_code or code.co_filename.startswith(_PACKAGE_PREFIX)


def _programs_frames(tb: "TracebackType | None", import_code: object) -> "TracebackType | None":
    """``tb`` without the entries of python-sb's own frames (see :func:`_not_programs`);
    the chain is relinked in place (``tb_next`` is writable)."""

    while tb is not None and _not_programs(tb, import_code):
        tb = tb.tb_next
    entry = tb
    while entry is not None:
        following = entry.tb_next
        while following is not None and _not_programs(following, import_code):
            following = following.tb_next
        if entry.tb_next is not following:
            entry.tb_next = following
        entry = following
    return tb


def _program_traceback(exc: BaseException) -> "TracebackType | None":
    """``exc``'s traceback as CPython would show it for the program alone: without the
    launcher's leading frames, nor, anywhere in it or in the exceptions it chains
    (``__cause__``, ``__context__``), frames of python-sb's code. (SPEC §1.)"""

    import builtins

    import_code = getattr(builtins.__import__, "__code__", None)
    tb = _programs_frames(_strip(exc.__traceback__), import_code)
    seen = {id(exc)}
    chained = [exc.__cause__, exc.__context__]
    while chained:
        other = chained.pop()
        if other is None or id(other) in seen:
            continue
        seen.add(id(other))
        other.__traceback__ = _programs_frames(_strip(other.__traceback__), import_code)
        chained += [other.__cause__, other.__context__]
    return tb


class _SilentOnce:
    """An ``excepthook`` that prints nothing once, then puts the previous hook back.

    The launcher prints an uncaught exception itself (without its own frames, through the
    program's ``sys.excepthook``) and then re-raises it, so that CPython ends the process exactly
    as it would have (exit 1, death by SIGINT for ``KeyboardInterrupt``, ``-i`` dropping to the
    REPL); this hook keeps CPython from printing it a second time.
    """

    def __init__(self, previous: "Any", tb: "TracebackType | None") -> None:
        self.previous = previous
        self.tb = tb

    def __call__(self, etype: type[BaseException], value: BaseException, tb: "Any") -> None:
        sys.excepthook = self.previous
        sys.last_traceback = self.tb
        value.__traceback__ = self.tb


class _ProgramFramesOnly:
    """``sys.excepthook`` of the REPL: the errors CPython reports at the prompt are shown with
    the program's frames only (as :func:`report_uncaught` shows a program's), through the hook
    it wraps. A refusal at the prompt then points at the line typed, not into the guard."""

    def __init__(self, hook: "Any") -> None:
        self.hook = hook

    def __call__(self, etype: type[BaseException], value: BaseException, tb: "Any") -> None:
        value.__traceback__ = tb
        tb = _program_traceback(value)
        sys.last_traceback = tb
        self.hook(etype, value, tb)


def install_repl_excepthook() -> None:
    """Put :class:`_ProgramFramesOnly` around the current ``sys.excepthook`` (once)."""

    if not isinstance(sys.excepthook, _ProgramFramesOnly):
        sys.excepthook = _ProgramFramesOnly(sys.excepthook)


def report_uncaught(exc: BaseException) -> None:
    """Print ``exc`` as CPython would, through the current ``sys.excepthook``, minus our frames
    (:func:`_program_traceback`).

    Afterwards the caller re-raises ``exc``; see :class:`_SilentOnce`.
    """

    tb = _program_traceback(exc)
    exc.__traceback__ = tb
    sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, tb
    hook = sys.excepthook
    try:
        hook(type(exc), exc, tb)
    except BaseException as hook_exc:  # CPython's own wording when the hook itself fails
        print("Error in sys.excepthook:", file=sys.stderr)
        sys.__excepthook__(type(hook_exc), hook_exc, hook_exc.__traceback__)
        print("\nOriginal exception was:", file=sys.stderr)
        sys.__excepthook__(type(exc), exc, tb)
    sys.excepthook = _SilentOnce(hook, tb)


# -- the program ---------------------------------------------------------------------------------


def _fresh_main() -> "dict[str, Any]":
    """A clean ``__main__`` namespace, as CPython has before the program runs."""

    import builtins

    main = sys.modules["__main__"]
    namespace = main.__dict__
    keep = {"__name__": "__main__", "__doc__": None, "__package__": None, "__spec__": None}
    namespace.clear()
    namespace.update(keep)
    namespace["__annotations__"] = {}
    namespace["__builtins__"] = builtins
    return namespace


def _can_open_error(path: str, exc: OSError) -> SystemExit:
    err = f"[Errno {exc.errno}] {exc.strerror}" if exc.errno else str(exc)
    sys.stderr.write(f"python-sb: can't open file {os.path.abspath(path)!r}: {err}\n")
    return SystemExit(2)


def _is_runnable_container(path: str) -> bool:
    """A directory or zip file holding ``__main__.py`` (``python dir/``, ``python app.zip``)."""

    if os.path.isdir(path):
        return True
    try:
        with open(path, "rb") as handle:
            head = handle.read(4)
    except OSError:
        return False
    if head != b"PK\x03\x04":
        return False
    import zipfile

    return zipfile.is_zipfile(path)


class Program:
    """One program to run, in the forms CPython accepts (script, module, code, stdin, REPL)."""

    def __init__(self, kind: str, target: str, args: list[str], *, skip_first_line: bool) -> None:
        self.kind = kind
        self.target = target
        self.args = args
        self.skip_first_line = skip_first_line
        #: :func:`program_compiler`'s answer, set before :meth:`load` when the guard will be
        #: armed: the accelerator's compile, or ``None`` (builtin ``compile``).
        self.compiler: Any = None
        self.code: CodeType | None = None
        self.container = False
        self.namespace: dict[str, Any] = {}

    # Where sys.path[0] and sys.argv come from (CPython 3.11, Modules/main.c and
    # Python/pathconfig.c): the script's real directory; the cwd for -m; '' otherwise.

    def path0(self) -> str:
        if self.kind == "script":
            if self.container:
                return os.path.abspath(self.target)
            return os.path.dirname(os.path.realpath(self.target))
        if self.kind == "module":
            return os.getcwd()
        if self.kind in WORKER_KINDS:  # partial mode: the calling program's sys.path[0]
            return self.target
        return ""

    def argv(self, argv0: str | None = None) -> list[str]:
        first = {"script": self.target, "module": "-m", "code": "-c", "stdin": "-", "repl": ""}
        return [first[self.kind] if argv0 is None else argv0, *self.args]

    def load(self) -> None:
        """Read and compile the program's own code (not for ``-m``: that is an import).

        Runs before the guard is armed, like every import the launcher itself needs (``runpy``
        here): the guard then judges only what the program does.
        """

        if self.kind == "module":
            import runpy
        if self.kind == "script":
            self.container = _is_runnable_container(self.target)
            if self.container:
                import runpy  # noqa: F401

                return
            try:
                with open(self.target, "rb") as handle:
                    source = handle.read()
            except OSError as exc:
                raise _can_open_error(self.target, exc) from None
            if self.target.endswith(".pyc") or source[:4] == _pyc_magic():
                import marshal

                self.code = marshal.loads(source[16:])
                return
            if self.skip_first_line:
                newline = source.find(b"\n")
                source = b"\n" + source[newline + 1 :] if newline >= 0 else b""
            self.code = self._compile(source, os.path.abspath(self.target))
        elif self.kind == "code":
            self.code = self._compile(self.target + "\n", "<string>")
            if SHOWS_C_SOURCE:
                register_c_source(self.target + "\n")
        elif self.kind == "stdin":
            source = sys.stdin.buffer.read()
            self.code = self._compile(source, "<stdin>")

    def _compile(self, source: "str | bytes", filename: str) -> "CodeType":
        """``compile(source, filename, "exec", dont_inherit=True)``, by the accelerator's
        ``compile_program`` when :func:`program_compiler` gave it (the same code, without
        builtin compile's first question, which builds the ``ast`` module's classes)."""

        if self.compiler is not None:
            code: CodeType | None = self.compiler(source, filename)
            if code is not None:
                return code
        return compile(source, filename, "exec", dont_inherit=True)

    def prepare_main(self) -> None:
        """Set ``__main__``'s globals as CPython does before running the program."""

        namespace = _fresh_main()
        if self.kind == "script" and not self.container:
            from _frozen_importlib_external import SourceFileLoader, SourcelessFileLoader

            path = os.path.abspath(self.target)
            loader_type = SourceFileLoader if self.code is None else SourcelessFileLoader
            if self.code is not None and self.code.co_filename == path:
                loader_type = SourceFileLoader
            namespace["__file__"] = path
            namespace["__cached__"] = None
            namespace["__loader__"] = loader_type("__main__", path)
        else:
            import _frozen_importlib

            namespace["__loader__"] = _frozen_importlib.BuiltinImporter
            if self.kind == "stdin":
                namespace["__file__"] = "<stdin>"
                namespace["__cached__"] = None
        self.namespace = namespace

    def run(self) -> None:
        """Run the program; exceptions propagate to :func:`run_program`."""

        if self.kind == "module":
            sys.argv[0] = "-m"
            _run_module_as_main(self.target, alter_argv=True)
        elif self.kind == "script" and self.container:
            _run_module_as_main("__main__", alter_argv=False)
        elif self.code is not None:
            try:
                exec(self.code, self.namespace)
            finally:
                # CPython removes the __file__ it set once a file or stdin has run (the -i REPL
                # that may follow does not see it).
                if self.kind in ("script", "stdin"):
                    self.namespace.pop("__file__", None)
                    self.namespace.pop("__cached__", None)


def _run_module_as_main(name: str, *, alter_argv: bool) -> None:
    """``runpy._run_module_as_main``, whose own errors ("No module named ...", "can't find
    '__main__' module in ...") name python-sb rather than ``sys.executable``, the interpreter
    python-sb started (the program's own ``SystemExit`` passes unchanged)."""

    import runpy

    own = sys.executable + ": "
    try:
        runpy._run_module_as_main(name, alter_argv=alter_argv)  # type: ignore[attr-defined]
    except SystemExit as exc:
        code = exc.code
        if isinstance(code, str) and code.startswith(own) and exc.__traceback__ is not None:
            frame = exc.__traceback__
            while frame.tb_next is not None:
                frame = frame.tb_next
            if frame.tb_frame.f_code.co_filename in ("<frozen runpy>", runpy.__file__):
                raise SystemExit("python-sb: " + code[len(own) :]) from None
        raise


def register_c_source(source: str) -> None:
    """Show ``source`` in tracebacks of ``<string>`` frames, as CPython 3.13+ does for its
    ``-c`` code (``linecache`` holds it under that name, with no file to check it against)."""

    import linecache

    lines = [line + "\n" for line in source.splitlines()]
    linecache.cache["<string>"] = (len(source), None, lines, "<string>")


def load_program(program: Program) -> BaseException | None:
    """Load the program's code; the error to report once the guard is armed, if any.

    A file that cannot be opened ends the run (status 2) unless ``-i`` asks for the REPL
    anyway; a syntax error is reported like CPython reports it (exit status 1, or the REPL).
    The error is returned rather than raised so that the caller arms the guard first: the
    ``-i`` REPL that may follow must not run unguarded.
    """

    try:
        program.load()
    except SystemExit as exc:
        if not sys.flags.inspect:
            raise
        return exc
    except Exception as exc:
        return exc
    return None


def _pyc_magic() -> bytes:
    import _frozen_importlib_external

    magic: bytes = _frozen_importlib_external.MAGIC_NUMBER
    return magic


def run_program(program: Program) -> None:
    """Run ``program`` and end as CPython ends: the program's frames only in tracebacks."""

    try:
        program.run()
    except SystemExit as exc:
        if sys.flags.inspect:  # -i: CPython prints it and drops to the REPL
            report_uncaught(exc)
        raise
    except BaseException as exc:
        report_uncaught(exc)
        raise
    finally:
        if sys.flags.inspect:
            flush_std()


def _system_exit_status(exc: SystemExit) -> int:
    """The status CPython ends with for an uncaught ``SystemExit`` (printing a non-int code)."""

    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if -(2**63) <= code < 2**63 else 0xFF  # C exit() of a C long
    try:
        text = str(code) + "\n"
        if sys.stderr is not None:
            sys.stderr.write(text)
        else:
            os.write(2, text.encode(errors="backslashreplace"))
    except Exception:  # a program may have closed or replaced its streams
        pass
    return 1


def end_guarded(exc: BaseException | None, atexit: "Any") -> "NoReturn":
    """End the process the way CPython would, without its finalization.

    CPython clears the audit hooks *before* it destroys modules, the codec registry and what
    they hold: a ``__del__`` running then (an object given to ``_codecs.register``, a global of
    ``__main__``) would run with no guard at all. So the end is done here, still guarded: wait
    for non-daemon threads, run the ``atexit`` handlers (the last of which releases the
    program's objects as CPython's finalization would: :func:`release_program`), flush the
    standard streams, and
    ``os._exit`` with the status CPython would have used (0; the ``SystemExit`` code; 1 after an
    uncaught exception, whose traceback is already printed; death by SIGINT after an uncaught
    ``KeyboardInterrupt``).
    """

    if exc is None:
        status = 0
    elif isinstance(exc, SystemExit):
        status = _system_exit_status(exc)
    else:
        status = 1
    flush_std()  # as CPython does once the main module has run (pythonrun.c's flush_io)
    threading = sys.modules.get("threading")
    if threading is not None:
        try:  # noqa: SIM105 (no contextlib import in the child)
            threading._shutdown()  # type: ignore[attr-defined]
        except BaseException:
            pass
    atexit._run_exitfuncs()  # the last of them releases the program's objects (program_begins)
    flush_std()
    if isinstance(exc, KeyboardInterrupt):
        import _signal  # type: ignore[import-not-found]

        _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
        _signal.raise_signal(_signal.SIGINT)
    os._exit(status)


def program_begins() -> None:
    """The last step before the program's first instruction, in every process that runs one
    (the bootstrap's ``main``, ``os-sandbox=none``'s ``inprocess.run_in_process``).

    Registers :func:`release_program` as the first ``atexit`` handler, so that it runs last of
    them: after the program's own handlers, before CPython's finalization (or ``end_guarded``'s
    ``os._exit``), with the guard still armed, handed what the start loaded and where the
    installation lies as they are now (not as the program may have changed ``sys.path``);
    and settles the collector (``interpreter.settle_heap``).
    """

    installed = tuple(path.rstrip(os.sep) + os.sep for path in installation_dirs())
    atexit.register(release_program, frozenset(sys.modules), installed)
    settle_heap()


def release_program(start: "frozenset[str]", installed: "tuple[str, ...]") -> None:
    """Free the program's objects the way CPython's finalization does, while the guard is armed.

    The exec'd interpreter ends with ``os._exit`` (``end_guarded``: no ``__del__`` may run after
    CPython has cleared the audit hooks), and ``os-sandbox=none``'s objects made before the
    program are frozen (``interpreter.settle_heap``: its ``__main__`` module among them, which
    CPython's last collection then never frees). Without this step a program that ends with a
    file still open would lose what it wrote (the buffer is written when the file object is
    freed), and objects kept in the program's globals would never run their ``__del__`` (a
    ``zipfile.ZipFile`` writes its central directory then).

    The namespaces released are the program's own: ``__main__``, and every module imported
    since the program began (not in ``start``) from a file outside the interpreter's
    installation and python-sb's package (``installed``: directory prefixes), the latest
    first. Not the installation's modules: the standard library's may be
    the very objects python-sb's start uses (the Python layer hands a module it loaded to the
    program's first import of it), and clearing them would break the rest of the end; an
    object the program stored in one of them is not freed. In three steps, each followed by a
    collection (the first one too, for the program's cyclic garbage): the names bound to
    anything but a module, a class or a function are set to ``None`` (the data: open files,
    archives, the program's objects), so that their ``__del__`` still finds the modules and
    functions it calls; then, as CPython's finalization does, every name beginning with ``_``,
    then every other name (``__builtins__`` kept). No namespace is touched while a daemon
    thread still runs: CPython stops such threads before it clears anything, and this cannot,
    so clearing names under a running thread could make it fail where it would not have (the
    collection still runs). A ``__del__`` that runs here is the program's code, judged by the
    guard.
    """

    import gc

    flush_std()  # as CPython: the standard streams are written out before anything is freed
    gc.collect()
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    namespaces = []
    for name, module in reversed(list(sys.modules.items())):
        namespace = getattr(module, "__dict__", None)
        if type(namespace) is not dict:
            continue
        if name != "__main__":
            where = namespace.get("__file__")
            if name in start or type(where) is not str or where.startswith(installed):
                continue
        namespaces.append(namespace)
    kept = (type(sys), type, type(release_program), type(len))  # module, class, functions
    for step in ("data", "private", "all"):
        for namespace in namespaces:
            for key in list(namespace):
                value = namespace[key]
                if key == "__builtins__" or value is None:
                    continue
                if step == "data" and isinstance(value, kept):
                    continue
                if step == "private" and not str(key).startswith("_"):
                    continue
                namespace[key] = None
        gc.collect()


def flush_std() -> None:
    """What CPython writes out after running a file, before the ``-i`` REPL starts."""

    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 (no contextlib import in the child)
            stream.flush()
        except Exception:  # a program may have closed or replaced its streams
            pass


def set_path0(program: Program, *, isolated: bool, saved_path: list[str]) -> None:
    """``sys.path`` as CPython builds it for ``program`` (nothing is prepended under -I/-P)."""

    sys.path[:] = saved_path
    if isolated:
        return
    sys.path.insert(0, program.path0())


# -- interactive mode ----------------------------------------------------------------------------


def interactive_setup(fields: dict[str, str]) -> None:
    """Banner and prompts for the REPL (the native one starts when the bootstrap returns)."""

    sys.ps1 = fields.get("ps1", "[sb] >>> ")
    sys.ps2 = fields.get("ps2", "[sb] ... ")
    banner = fields.get("banner", "")
    if banner:
        sys.stderr.write(banner)
        sys.stderr.flush()
    startup = fields.get("startup", "")
    if startup:
        run_startup(startup)


def run_startup(path: str) -> None:
    """``PYTHONSTARTUP`` (CPython runs it for the REPL; under python-sb only when granted)."""

    try:
        with open(path, "rb") as handle:
            source = handle.read()
    except OSError as exc:
        sys.stderr.write(f"Could not open PYTHONSTARTUP\n{type(exc).__name__}: {exc}\n")
        return
    try:
        exec(compile(source, path, "exec"), sys.modules["__main__"].__dict__)
    except SystemExit:
        raise
    except BaseException as exc:
        exc.__traceback__ = _strip(exc.__traceback__)
        sys.excepthook(type(exc), exc, exc.__traceback__)


def start_ipython(fields: dict[str, str]) -> None:
    """Run IPython in ``__main__`` with the sandbox banner and prompts."""

    from IPython import start_ipython as _start  # type: ignore[import-not-found]
    from IPython.terminal.prompts import (  # type: ignore[import-not-found,attr-defined,unused-ignore]
        Prompts,
        Token,
    )
    from traitlets.config import Config  # type: ignore[import-not-found]

    class SandboxPrompts(Prompts):  # type: ignore[misc]
        def in_prompt_tokens(self) -> "list[tuple[Any, str]]":
            own = super().in_prompt_tokens()  # type: ignore[no-untyped-call,unused-ignore]
            return [(Token.Prompt, "[sb] "), *own]

    config = Config()
    config.TerminalInteractiveShell.banner1 = fields.get("banner", "")
    config.TerminalInteractiveShell.prompts_class = SandboxPrompts
    _start(argv=[], user_ns=sys.modules["__main__"].__dict__, config=config)


# -- entry points --------------------------------------------------------------------------------


def trusted_path(src_dir: str) -> list[str]:
    """``sys.path`` for the launcher's own imports: the standard library, then ``src_dir``.

    The standard library comes first so that nothing installed next to python-sb can replace
    one of its modules; python-sb's package is found in ``src_dir`` (the standard library has
    no ``pysandboxes``).
    """

    stdlib = os.path.dirname(os.__file__)
    lib = os.path.dirname(stdlib)
    keep = [
        entry
        for entry in sys.path
        if entry == stdlib
        or entry == os.path.join(stdlib, "lib-dynload")
        or (entry.endswith(".zip") and os.path.dirname(entry) == lib)
    ]
    return [*keep, src_dir]


def _check_own_package(src_dir: str) -> None:
    """Refuse to arm a ``pysandboxes`` that is not python-sb's own (loaded before the bootstrap,
    by a ``sitecustomize`` or ``.pth`` file, from somewhere else)."""

    package = sys.modules.get("pysandboxes")
    origin = getattr(package, "__file__", None) or ""
    if not origin.startswith(src_dir.rstrip(os.sep) + os.sep):
        sys.stderr.write(
            f"python-sb: refusing to run: the module 'pysandboxes' was loaded from {origin!r}, "
            f"not from {src_dir!r}, before the sandbox was armed\n"
        )
        raise SystemExit(2)


#: The only types the guard's data may hold (``wire.guard_data``): plain data, no code.
_PLAIN = (str, int, bool, type(None))


def plain_data(value: object, depth: int = 0) -> bool:
    """Whether ``value`` is made of dicts (with ``str`` keys), lists, ``str``, ``int``, ``bool``
    and ``None`` only, nested at most 32 deep.

    ``marshal`` can also encode code objects (which it never runs on decoding, but which a
    policy has no use for) and other types: the child refuses anything but plain data so that
    the hand-over stays data whatever bytes it is given.
    """

    kind = type(value)
    if kind in _PLAIN:
        return True
    if depth > 32:
        return False
    if kind is list:
        return all(plain_data(item, depth + 1) for item in value)  # type: ignore[attr-defined]
    if kind is dict:
        return all(
            type(key) is str and plain_data(item, depth + 1)
            for key, item in value.items()  # type: ignore[attr-defined]
        )
    return False


def decode_guard_data(data: bytes) -> "tuple[dict[str, Any], dict[str, Any]]":
    """The (RunContext fields, policy data) pair of ``wire.guard_data``; ``RuntimeError`` when
    the bytes are not that."""

    import marshal

    try:
        value = marshal.loads(data)
    except (EOFError, ValueError, TypeError) as exc:
        raise RuntimeError(f"python-sb: unreadable launch data ({exc})") from None
    if not (
        type(value) is list
        and len(value) == 2
        and type(value[0]) is dict
        and type(value[1]) is dict
        and plain_data(value)
    ):
        raise RuntimeError("python-sb: launch data that is not plain data")
    return value[0], value[1]


def program_compiler(choice: str) -> "Any":
    """The compile of the program's own code for a run whose accelerator choice is ``choice``
    (``RunContext.accelerator``): the compiled accelerator's ``compile_program``, or ``None``
    (builtin compile) under ``off`` or where it was not built.

    ``compile_program`` is builtin compile of source without its first step, the question
    whether the source is an ``ast`` object, whose first asking in a process builds the ``ast``
    module's classes (a tenth of a child's start-up: docs/performance.md). Imported here, before
    the guard is armed; the guard's ``take`` finds the module loaded and removes it as always.
    """

    if choice == "off":
        return None
    try:
        from pysandboxes.guard import _accelerator  # type: ignore[attr-defined]
    except ImportError:
        return None
    return getattr(_accelerator, "compile_program", None)  # None: built before it existed


def import_guard(data: bytes, src_dir: str, portable: str = "") -> "tuple[Any, Any, Any, Any]":
    """Import the Python layer (lazily: only runs that arm it pay for it) and decode its
    policy and run context: ``(arm, policy, context, unit)`` for :func:`arm_guard` (``unit``:
    :func:`_start_unit`'s).

    Called with ``sys.path`` set to :func:`trusted_path`, before the program is loaded (the
    context says how to compile it: :func:`program_compiler`).
    """

    context_data, policy_data = decode_guard_data(data)
    if "pysandboxes" in sys.modules:
        _check_own_package(src_dir)
    unit = _start_unit(src_dir)
    # Before arming: it reads the environment once, which must not count as the program's read.
    from pysandboxes import platform_caps

    if portable:  # PYSANDBOXES_PORTABLE of the parent (a switch for tests only)
        platform_caps.adopt(portable)
    from pysandboxes.guard import arm  # type: ignore[attr-defined,unused-ignore]
    from pysandboxes.policy.model import Policy
    from pysandboxes.runtime import RunContext

    _check_own_package(src_dir)
    return arm, Policy.from_data(policy_data), RunContext.from_dict(context_data), unit


def _start_unit(src_dir: str) -> "Any":
    """The guard's modules as one unit (``launch/unit.py``), its finder installed until
    :func:`arm_guard` has armed: an object whose ``__exit__`` removes it (nothing to remove
    without a valid unit, or in the command line's process, which imports the usual way)."""

    if _load_beside is None:
        return None
    unit = _load_beside(__file__, "unit").installed(os.path.join(src_dir, "pysandboxes"))
    unit.__enter__()
    return unit


def arm_guard(guard: "tuple[Any, Any, Any, Any]", before_arm: "Any" = None) -> None:
    """Arm the Python layer of :func:`import_guard`'s answer.

    ``before_arm`` (partial mode's worker starting its threads) runs last before arming, after
    the learning hand-over, whose seccomp filter the threads then inherit.
    """

    arm, policy, context, unit = guard
    try:
        _arm_guard(arm, policy, context, before_arm)
    finally:
        if unit is not None:  # the unit's finder, off sys.meta_path before the program runs
            unit.__exit__(None, None, None)


def _arm_guard(arm: "Any", policy: "Any", context: "Any", before_arm: "Any") -> None:
    if context.mode == "learn" and context.tmpdir:
        # Learning only: what child processes do is observed by python-sb (seccomp user
        # notification), set up here, before the program runs. Never on an enforcing run.
        from pysandboxes.learn.children import hand_over

        hand_over(str(context.tmpdir))
    if before_arm is not None:
        before_arm()
    arm(policy, context, eval_extension(policy, context.mode))


def eval_extension(policy: "Any", mode: str) -> "Any":
    """The eval-* extension the guard is handed (``EXTENSIONS["eval"]``, loaded by name: a
    layer above): when the policy has ``eval-*`` lines, or the run learns or audits (which
    record evaluations); else ``None`` (nothing of the eval machinery is loaded)."""

    if not policy.eval_rules and mode == "enforce":
        return None
    return __import__(EXTENSIONS["eval"], fromlist=("install",))


def set_orig_argv(fields: dict[str, str], words: list[str]) -> list[str]:
    """``sys.orig_argv`` as plain ``python`` would have it (the interpreter, the Python words of
    the command line, the program's arguments; python-sb's own options left out). ``words``
    holds the Python words first (``fields["n_words"]`` of them), then the program's arguments,
    which are returned."""

    count = int(fields.get("n_words", "0"))
    python_words, args = words[:count], words[count:]
    sys.orig_argv[:] = [sys.executable, *python_words, *args]
    return args


def main(fd: "int | str", src_dir: str) -> None:
    """The bootstrap's entry point in the child interpreter (called by ``launch/boot.py``)."""

    fields, args, guard_data = decode_run(_read_fd(open_channel(fd)))
    if fields["kind"] not in WORKER_KINDS:  # a worker imports the program's module before arming
        pause_collector()
    saved_path = sys.path[:]
    tmpdir = fields.get("tmpdir", "")
    if tmpdir:
        register_tmpdir_cleanup(tmpdir)
    args = set_orig_argv(fields, args)
    program = Program(
        fields["kind"], fields.get("program", ""), args, skip_first_line=fields.get("x") == "1"
    )
    sys.argv[:] = program.argv(fields.get("argv0"))
    isolated = bool(sys.flags.isolated or getattr(sys.flags, "safe_path", 0))
    # CPython put boot.py's directory first in sys.path (unless -I/-P): the program gets its
    # own path0 instead (set_path0). Until the program runs, the bootstrap imports only from
    # the standard library and python-sb's own directory: no file in the cwd or a PYTHONPATH
    # directory can stand in for a module it imports before the guard is armed.
    launch_dir = os.path.dirname(__file__)
    if (
        saved_path
        and not isolated
        and saved_path[0] in ("", launch_dir, os.path.realpath(launch_dir))
    ):
        saved_path = saved_path[1:]
    sys.path[:] = trusted_path(src_dir)
    guard = None
    if fields.get("arm") == "1":
        guard = import_guard(guard_data, src_dir, fields.get("portable", ""))
        program.compiler = program_compiler(guard[2].accelerator)
    load_error = load_program(program)
    sys._pysandboxes_child = program.kind  # type: ignore[attr-defined]  # is_in_sandbox()
    server = None
    if program.kind in WORKER_KINDS:  # partial mode: imports, then threads, before the guard
        # partial/worker.py, a layer above: loaded by its name (EXTENSIONS), never imported.
        server = __import__(EXTENSIONS["worker"], fromlist=("prepare",)).prepare(fields)
    if guard is not None:
        arm_guard(guard, None if server is None else server.start_threads)
    elif server is not None:
        server.start_threads()
    set_path0(program, isolated=isolated, saved_path=saved_path)
    program.prepare_main()
    program_begins()
    if fields.get("inspect_prompt") == "1":
        sys.ps1, sys.ps2 = fields.get("ps1", "[sb] >>> "), fields.get("ps2", "[sb] ... ")
    if load_error is not None:
        # Only now, with the guard armed: under -i the REPL follows (CPython's behaviour).
        if not isinstance(load_error, SystemExit):
            report_uncaught(load_error)
            raise load_error
        flush_std()
        return
    if server is not None:
        server.serve()
        end_guarded(None, atexit)
    if program.kind == "repl":
        if fields.get("ipython") == "1":
            start_ipython(fields)
            return
        install_repl_excepthook()
        interactive_setup(fields)
        return
    if sys.flags.inspect:  # -i: the REPL follows, and ends as CPython ends it
        install_repl_excepthook()
        run_program(program)
        return
    try:
        run_program(program)
    except BaseException as exc:
        end_guarded(exc, atexit)
    end_guarded(None, atexit)
