"""Who is calling: the program, a library, or the guard itself.

Several decisions depend on the code that triggered an event, not on the event alone:
``compile`` of a string is dynamic code when the program does it and a detail of
``dataclasses`` when the standard library does; an ``import`` made by the program is judged by
``python-import`` while the imports that an allowed module makes for itself are its own
business. The caller is identified by the *code object* of its frame (``co_filename``), which
the program cannot forge without ``compile`` or ``code.replace`` (both refused), and never by
module globals such as ``__name__`` or ``__file__`` (which it can rewrite).

Reading ``frame.f_code`` raises the ``object.__getattr__`` audit event itself; the guard marks
its thread as busy while it walks frames, and the hook ignores that nested event. The walks read
frames through :mod:`pysandboxes.guard.accelerator` (``code_of``, ``frame_at``, ``in_chain``):
compiled, with no event; or those reads themselves.

A *deputy* is a library module that runs code or imports modules on the program's behalf
(``importlib.import_module``, ``timeit``, ``code``, ``inspect``...): its frames are skipped so
that the program stays the caller.
"""

from __future__ import annotations

from pysandboxes.guard.kit import Kit, make_busy

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from pysandboxes.guard.accelerator import Accelerator

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType
    from typing import Any, NamedTuple
else:
    from pysandboxes.record import NamedTuple

#: Deputies of the import system (their caller is the importer).
IMPORT_DEPUTIES = (
    "<frozen importlib.",
    "<frozen zipimport>",
    "<frozen runpy>",  # frozen in 3.11
    "importlib/__init__.py",
    "runpy.py",
    # Callback dispatchers: ExitStack.callback(__import__, "socket") is the program's import.
    "contextlib.py",
    "sched.py",
)
#: Deputies only for what they hand to ``importlib.import_module`` (their own lazy imports,
#: such as pkgutil's ``import re``, are theirs): ``pkgutil.resolve_name("json")``.
NAME_DEPUTIES = ("pkgutil.py",)
#: Deputies that run source or hand out frames for their caller.
CODE_DEPUTIES = (
    "<frozen importlib.",
    "importlib/",
    "code.py",
    "codeop.py",
    "timeit.py",
    "runpy.py",
    "<frozen runpy>",
    "pdb.py",
    "bdb.py",
    "cProfile.py",
    "profile.py",
    "trace.py",
    "doctest.py",
    "pickle.py",
    # Callback dispatchers: ExitStack.callback(eval, source) is the program's eval.
    "contextlib.py",
    "sched.py",
    # The eval/exec/compile that replace the builtins under eval-* rules or learning: their
    # caller is the one judged (in learning, the original's compile event is the program's).
    "pysandboxes/evalguard/program.py",
    # site.addsitedir/addpackage exec() the "import" lines of the .pth files they read: a
    # .pth file the program wrote is the program's source.
    "site.py",
    "<frozen site>",  # frozen in 3.11
)


class Frames(NamedTuple):
    """Closures over the stack (see the module docstring)."""

    caller_is_program: Callable[[tuple[str, ...]], bool]
    caller_file: Callable[[tuple[str, ...]], str | None]
    library_names: Callable[[], tuple[str, ...]]
    guard_in_chain: Callable[[Any], bool]
    is_library_file: Callable[[str], bool]
    module_of_file: Callable[[str], str | None]
    guard_running: Callable[[Any], bool]
    hidden_generator: Callable[[Any], bool]
    statement_importer: Callable[[tuple[str, ...]], str | None]
    cut_guard_tail: Callable[[Any], None]
    survey: Callable[
        [int, tuple[str, ...], Callable[[Any], bool]],
        tuple[tuple[tuple[str, str], ...], str | None],
    ]


def make_frames(
    kit: Kit,
    accelerator: Accelerator,
    lib_roots: tuple[str, ...],
    path_roots: tuple[str, ...],
    guard_globals: frozenset[int],
    busy: dict[int, int],
    program_code: tuple[str, ...] = (),
    guard_dir: str = "",
    graveyard: list[Any] | None = None,
    hidden_globals: frozenset[int] = frozenset(),
    hook_scope: int = 0,
) -> Frames:
    """``lib_roots``: directories of trusted library code (the interpreter's prefixes, the
    site-packages in use, python-sb itself); ``path_roots``: the ``sys.path`` entries among them
    (to name a module after its file); ``guard_globals``: ``kit.identity`` of the guard
    modules' globals (a frame running guard code has one of them as ``f_globals``);
    ``accelerator``: how frames are read (:mod:`pysandboxes.guard.accelerator`);
    ``program_code``: directories and files of the program's own code, which is never library
    code; ``hook_scope``: ``kit.identity`` of the private globals of the hook's body (also in
    ``guard_globals``; ``0``: none), which mark where a walk may start (:func:`below_hook`)."""
    # Captured at arm time: the program can reach this module's namespace.
    captured_import_deputies = IMPORT_DEPUTIES
    captured_name_deputies = NAME_DEPUTIES
    captured_code_deputies = CODE_DEPUTIES
    captured_runtimeerror = RuntimeError

    getframe = kit.getframe
    frame_at = accelerator.frame_at  # getframe, with no event when compiled
    code_of = accelerator.code_of  # frame.f_code, likewise
    in_chain = accelerator.in_chain
    enter, leave = make_busy(kit, busy)
    id_ = kit.identity  # as the sets were made (hook.py): no builtins.id event per frame
    len_ = kit.len
    any_ = any
    tuple_ = tuple
    str_ = str
    type_ = kit.type
    #: What a code object's file is taken to be when ``co_filename`` is not an exact ``str``
    #: (a loader given a str subclass keeps it): never a library file, never hashed or
    #: compared with the program's methods (attacks/r3_*_filename_*.py).
    not_a_file = "<co_filename that is not a str>"

    def file_of(code: Any) -> str:
        name = code.co_filename
        return name if type_(name) is str_ else not_a_file  # type: ignore[no-any-return]

    def is_deputy(filename: str, deputies: tuple[str, ...]) -> bool:
        if filename.startswith("<frozen "):
            return filename.startswith(deputies)
        return any_(("/" + d) in filename for d in deputies)

    roots = tuple(r.rstrip("/") + "/" for r in lib_roots)
    guard_prefix = guard_dir.rstrip("/") + "/guard/" if guard_dir else "\0"
    program_dirs = tuple(p.rstrip("/") + "/" for p in program_code if p.rstrip("/"))
    program_files = frozenset(program_code)
    by_length = kit.sorted((r.rstrip("/") + "/" for r in path_roots), key=len_, reverse=True)
    paths = tuple(by_length)
    library_cache: dict[str, bool] = {}
    module_cache: dict[str, str | None] = {}

    def longest(filename: str, prefixes: tuple[str, ...]) -> int:
        best = 0
        for prefix in prefixes:
            if len_(prefix) > best and filename.startswith(prefix):
                best = len_(prefix)
        return best

    def is_library_file(filename: str) -> bool:
        """Below a library root, unless a *longer* program root holds it (a skill installed
        in site-packages and run with ``-m``; a program directory that merely contains the
        interpreter, as ``~`` holds ``~/.pyenv``, does not count)."""

        found = library_cache.get(filename)
        if found is None:
            found = filename.startswith("<frozen ") or (
                filename not in program_files
                and longest(filename, roots) > longest(filename, program_dirs)
            )
            if len_(library_cache) > 4096:
                library_cache.clear()
            library_cache[filename] = found
        return found

    def module_of_file(filename: str) -> str | None:
        if filename in module_cache:
            return module_cache[filename]
        name: str | None = None
        if filename.startswith("<frozen ") and filename.endswith(">"):
            name = filename[8:-1]
        else:
            for root in paths:
                if filename.startswith(root):
                    rest = filename[len_(root) :]
                    if rest.endswith(".py"):
                        rest = rest[:-3]
                    elif ".cpython-" in rest:
                        rest = rest.split(".cpython-", 1)[0]
                    if rest.endswith("/__init__"):
                        rest = rest[:-9]
                    name = rest.replace("/", ".")
                    break
        if len_(module_cache) > 4096:
            module_cache.clear()
        module_cache[filename] = name
        return name

    def is_guard_frame(frame: Any) -> bool:
        """Guard code: the guard's globals *and* a code object from the guard's files (the
        program could run its own code with a guard module's dict as globals; it cannot make
        a code object with a guard file name without compile or code.replace, both refused).
        Busy must be set (reading ``f_code`` raises an event)."""

        return id_(frame.f_globals) in guard_globals and file_of(code_of(frame)).startswith(
            guard_prefix
        )

    deputy_cache: dict[tuple[str, int], bool] = {}
    # The deputy lists whose answers are remembered: this module's constants, captured now and
    # alive for the whole run, so that their identity names them (a tuple made by a caller
    # could share a dead one's identity: never remembered).
    cached_lists = frozenset(
        id_(d) for d in (captured_import_deputies, captured_name_deputies, captured_code_deputies)
    )

    def is_deputy_file(filename: str, deputies: tuple[str, ...]) -> bool:
        """:func:`is_deputy`, remembered by file for the module's own deputy lists."""

        which = id_(deputies)
        if which not in cached_lists:
            return is_deputy(filename, deputies)
        key = (filename, which)
        found = deputy_cache.get(key)
        if found is None:
            found = is_deputy(filename, deputies)
            if len_(deputy_cache) > 4096:
                deputy_cache.clear()
            deputy_cache[key] = found
        return found

    def below_hook(frame: Any) -> Any:
        """Where a walk from ``frame`` (the guard's own, at the top of the stack) may start
        checking: below the innermost running hook body, when every frame up to it runs with a
        guard module's globals -- the handler's own call chain, which runs no program code
        (the hook pauses the collector and queues signal handlers); their code need not be
        read (one ``f_code`` event each). The hook body's globals are a dict of its own that
        no module names, so that no other frame has them. Any other frame met first (a
        replaced builtin calling the guard outside any hook): ``frame`` itself, checked from
        the top as every frame below the hook is."""

        if not hook_scope:
            return frame
        probe = frame
        while probe is not None:
            scope = id_(probe.f_globals)
            if scope == hook_scope:
                return probe.f_back
            if scope not in guard_globals:
                return frame
            probe = probe.f_back
        return frame

    def outside_guard(deputies: tuple[str, ...]) -> tuple[Any, Any]:
        """``(frame, its code)``: the first frame that is neither the guard's nor a deputy's
        (``(None, None)`` when there is none; busy must be set)."""

        _, frame, code = walk(0, deputies, None)
        return frame, code

    def walk(
        count: int, deputies: tuple[str, ...], enough: Callable[[Any], bool] | None
    ) -> tuple[list[tuple[str, str]], Any, Any]:
        """The one walk for the caller (busy must be set): ``(first, frame, code)``, where
        ``first`` is ``(file, function)`` of the first ``count`` frames outside the guard,
        innermost first, and ``frame`` (with its ``code``) the first frame outside the guard
        and ``deputies``; ``(first, None, None)`` when there is none, or when ``enough(first)``
        says the first frames alone decide (the walk stops there).

        One ``f_code`` read per frame (each raises an event that re-enters the hook): the
        guard test of :func:`is_guard_frame` and the deputy test share it, and the code is
        handed to the caller, which would otherwise read it once more."""

        if compiled_walk is not None:  # the same walk in C (guard/_accelerator.c)
            return compiled_walk(count, deputies, enough, walk_state)  # type: ignore[no-any-return]
        found: list[tuple[str, str]] = []
        frame: Any = below_hook(frame_at(2))
        inner = ""  # the file of the previous deputy frame met (innermost first)
        caller: Any = None
        caller_code: Any = None
        while frame is not None:
            code = code_of(frame)
            filename = file_of(code)
            if id_(frame.f_globals) in guard_globals and filename.startswith(guard_prefix):
                frame = frame.f_back
                continue
            if len_(found) < count:
                found.append((filename, code.co_name))
                if len_(found) == count and enough is not None and enough(found):
                    return found, None, None
            if caller is None:
                if deputies and acts_for_another(code, filename, inner, deputies):
                    inner = filename
                else:
                    caller, caller_code = frame, code
            if caller is not None and len_(found) >= count:
                break
            frame = frame.f_back
        return found, caller, caller_code

    def acts_for_another(code: Any, filename: str, inner: str, deputies: tuple[str, ...]) -> bool:
        """Whether a frame outside the guard (``code``, its ``filename``) is a deputy's, which
        the walks for the caller pass over; ``inner``: the file of the deputy frame met just
        before it, if any. A deputy's own module-level code (its imports) is not on anyone's
        behalf."""

        return (
            code.co_name != "<module>"
            and is_library_file(filename)
            and (
                is_deputy_file(filename, deputies)
                or (
                    deputies is captured_import_deputies
                    and inner.endswith("/importlib/__init__.py")
                    and is_deputy_file(filename, captured_name_deputies)
                )
            )
        )

    compiled_walk = accelerator.walk
    # What the compiled walk reads (its W_* indexes): the same sets, prefix, lists, caches and
    # predicates as the Python walk's.
    walk_state = (
        guard_globals,
        guard_prefix,
        hook_scope,
        captured_import_deputies,
        captured_name_deputies,
        not_a_file,
        is_library_file,
        is_deputy_file,
        library_cache,
        deputy_cache,
    )

    def survey(
        count: int, deputies: tuple[str, ...], enough: Callable[[Any], bool]
    ) -> tuple[tuple[tuple[str, str], ...], str | None]:
        """``(first, caller)`` from one walk of the stack: ``(file, function)`` of the first
        ``count`` frames outside the guard, innermost first, and the file of the first frame
        outside the guard and ``deputies`` (:func:`caller_file`'s answer), or ``None`` when
        ``enough(first)`` says the first frames alone decide (the walk stops there). The
        handlers that ask both (``compile``: is it the import system's, and whose is it;
        ``marshal.load``) read each frame's code once instead of twice."""

        state = enter()
        try:
            found, frame, code = walk(count, deputies, enough)
            return tuple_(found), None if frame is None else file_of(code)
        finally:
            frame = code = None
            leave(state)

    def caller_file(deputies: tuple[str, ...]) -> str | None:
        state = enter()
        try:
            frame, code = outside_guard(deputies)
            return None if frame is None else file_of(code)
        finally:
            frame = code = None
            leave(state)

    def statement_importer(deputies: tuple[str, ...]) -> str | None:
        """The importer's file, for an import of a module that may already be loaded; ``None``
        when that import is not the program's to judge: source text run by a library
        (``exec`` of generated code: a ``<string>`` frame whose globals are not ``__main__``'s;
        the program itself cannot run source text without the ``dynamic-code`` right)."""

        state = enter()
        try:
            frame, code = outside_guard(deputies)
            if frame is None:
                return None
            filename: str = file_of(code)
            if filename.startswith("<") and not filename.startswith("<frozen "):
                name = frame.f_globals.get("__name__")
                if name != "__main__":
                    return None
            return filename
        finally:
            frame = code = None
            leave(state)

    def caller_is_program(deputies: tuple[str, ...]) -> bool:
        filename = caller_file(deputies)
        return filename is not None and not is_library_file(filename)

    def library_names() -> tuple[str, ...]:
        """Dotted names of the library functions between the event and the program."""

        state = enter()
        names: list[str] = []
        try:
            frame: Any = below_hook(frame_at(1))
            while frame is not None:
                if is_guard_frame(frame):
                    frame = frame.f_back
                    continue
                code = code_of(frame)
                filename = file_of(code)
                if not is_library_file(filename):
                    break
                module = module_of_file(filename)
                if module is not None:
                    qualname = code.co_qualname
                    if qualname.endswith(".__init__"):
                        qualname = qualname[:-9]
                    names.append(module + "." + qualname)
                frame = frame.f_back
        finally:
            leave(state)
        return tuple_(names)

    def guard_in_chain(frame: Any) -> bool:
        """Whether ``frame`` or one of its callers runs guard code (no event is raised)."""

        return in_chain(frame, guard_globals)

    frame_type = type(getframe(0))
    frame_clear = frame_type.clear
    traceback_type = type(_traceback())
    tb_frame = traceback_type.__dict__["tb_frame"].__get__
    tb_next = traceback_type.__dict__["tb_next"].__get__
    set_tb_next = traceback_type.__dict__["tb_next"].__set__
    generator_flags = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR
    buried: list[Any] = [] if graveyard is None else graveyard

    def guard_running(frame: Any) -> bool:
        """Whether ``frame`` or one of its callers is a guard frame still in use: running, or a
        suspended generator (the wrappers keep the originals in one). A *finished* guard frame
        (the hook's, left in a refusal's traceback) is cleared on the spot and does not count:
        it holds nothing any more. Busy must be set (``f_code`` raises an event)."""

        while frame is not None:
            scope = id_(frame.f_globals)
            if scope in guard_globals:
                if code_of(frame).co_flags & generator_flags:
                    return True
                # Its locals are kept alive until the hook returns (the graveyard): clearing
                # may drop the last reference to an object of the program, whose __del__
                # would run here, busy (attacks/r3_disarm_del_on_frame_clear.py).
                kept = frame.f_locals
                try:
                    frame_clear(frame)  # refused for a frame that is running (any thread)
                except captured_runtimeerror:
                    return True
                buried.append(kept)
            frame = frame.f_back
        return False

    def hidden_generator(frame: Any) -> bool:
        """A generator frame of a hidden original rebuilt outside the guard's modules (the
        factory holding ``_imp.create_dynamic``): never handed out through ``gi_frame``, to a
        library either (``inspect.getgeneratorlocals``;
        attacks/r3_files_inspect_outside_factory.py)."""

        return frame is not None and id_(frame.f_globals) in hidden_globals

    def cut_guard_tail(tb: Any) -> None:
        """Splice the guard's frames out of ``tb``'s chain after its first entry that is not the
        guard's: a refusal's traceback then ends at the line that did the refused operation
        (SPEC §1), as for an error raised by a C function, and an error raised through a
        wrapper (``__import__``) shows the program's and the library's frames only. Busy must
        be set."""

        if id_(tb_frame(tb).f_globals) in guard_globals:
            return
        while True:
            following = tb_next(tb)
            skipped = False
            while following is not None and id_(tb_frame(following).f_globals) in guard_globals:
                following = tb_next(following)
                skipped = True
            if skipped:
                # The entries spliced out (and their frames) stay alive until the hook has
                # returned: freed here, a __del__ of the program's would run busy
                # (attacks/r3_disarm_del_on_traceback_cut.py).
                buried.append(tb_next(tb))
                set_tb_next(tb, following)
            if following is None:
                return
            tb = following

    return Frames(
        guard_running=guard_running,
        hidden_generator=hidden_generator,
        statement_importer=statement_importer,
        cut_guard_tail=cut_guard_tail,
        caller_is_program=caller_is_program,
        caller_file=caller_file,
        library_names=library_names,
        guard_in_chain=guard_in_chain,
        is_library_file=is_library_file,
        module_of_file=module_of_file,
        survey=survey,
    )


__all__ = ["CODE_DEPUTIES", "IMPORT_DEPUTIES", "FrameType", "Frames", "make_frames"]


def _traceback() -> Any:
    try:
        raise RuntimeError
    except RuntimeError as exc:
        return exc.__traceback__
