"""The one audit hook: assembly of the concerns, and the events that belong to none of them.

:func:`install` builds every table from the policy and the run context, puts the wrappers and
the import stash in place, and adds a single ``sys.addaudithook`` callable. That callable and
everything it uses live in closures created here: no module global refers to them, ``gc``
walks are refused (``introspection``), and none of them runs code the program could have
replaced (see :mod:`pysandboxes.guard.kit`).

Events handled here:

- ``object.__getattr__`` -- restricted attribute reads (``__code__``, ``f_code``, ``gi_frame``,
  ``tb_frame``...) by the program are introspection; a frame whose callers include the guard
  is never handed out (a refusal's traceback passes through the hook's frames);
- ``sys._getframe`` -- refused when the frame's callers include the guard (a ``__del__`` or
  signal handler running while the hook runs could otherwise reach its frames);
- ``object.__setattr__`` of ``__code__``; ``compile`` of source by the program (dynamic code);
  ``marshal.loads`` outside the import system; ``pickle.find_class`` (deserialization);
  ``mmap.__new__`` of a file (native);
- the private events of the wrappers (``pysandboxes.call``, ``pysandboxes.stat``,
  ``pysandboxes.filter``).
"""

from __future__ import annotations

import os
import sys

from pysandboxes.guard import accelerator as accelerator_module
from pysandboxes.guard import calls as calls_module
from pysandboxes.guard import evalbuiltins, files, imports, network, signals, wrappers
from pysandboxes.guard.calls import FRAME_ATTRIBUTES, RESTRICTED_ATTRIBUTES, make_call_judge
from pysandboxes.guard.denials import NOT_FOUND, make_reporter
from pysandboxes.guard.descriptors import make_descriptor_handlers
from pysandboxes.guard.file_refusals import make_lexical
from pysandboxes.guard.frames import CODE_DEPUTIES, make_frames
from pysandboxes.guard.kit import capture, make_busy
from pysandboxes.guard.paths import FD, make_path_tools
from pysandboxes.policy.model import Policy
from pysandboxes.runtime import RunContext

#: The code file of the import system's path finder (frozen in CPython 3.11).
_IMPORT_SYSTEM_FILE = "<frozen importlib._bootstrap_external>"

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

if TYPE_CHECKING:
    Handler = Callable[[tuple[Any, ...]], None]


def _program_code(context: RunContext) -> tuple[str, ...]:
    """Where the program's own code lives, even inside the interpreter's directories.

    A script's directory; for ``-m``, the directory of the target's top-level package (or its
    module file): a skill installed in site-packages and run with ``-m`` is the program, so its
    ``eval`` and its imports are judged as the program's.
    """

    found: list[str] = []
    if context.program_kind == "script" and context.program:
        script = os.path.abspath(context.program)
        found += [os.path.dirname(script), os.path.dirname(os.path.realpath(script))]
    elif context.program_kind == "module" and context.program:
        from _frozen_importlib_external import PathFinder

        top = context.program.partition(".")[0]
        try:
            spec = PathFinder.find_spec(top, [context.cwd or os.getcwd(), *sys.path])
        except (ImportError, ValueError, OSError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            found += list(spec.submodule_search_locations)
        elif spec is not None and spec.origin:
            found.append(spec.origin)
    return tuple(dict.fromkeys(p for p in found if p))


def _roots(
    context: RunContext, guard_dir: str, stdlib_dir: str
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(library roots, sys.path roots among them, roots of the program's own code)."""

    prefixes = tuple(context.prefixes) or tuple(
        {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    )
    lib = []
    for path in (*prefixes, guard_dir, stdlib_dir):
        for variant in {path, os.path.realpath(path)}:
            if variant and variant not in lib:
                lib.append(variant)
    lib_t = tuple(lib)
    below = tuple(p.rstrip("/") + "/" for p in lib_t)
    path_roots = [stdlib_dir, os.path.join(stdlib_dir, "lib-dynload"), os.path.dirname(guard_dir)]
    path_roots += [p for p in sys.path if p and (p + "/").startswith(below)]
    program: list[str] = []
    if context.program_kind == "script" and context.program:
        script = os.path.abspath(context.program)
        program += [os.path.dirname(script), os.path.dirname(os.path.realpath(script))]
    program.append(context.cwd or os.getcwd())
    program += [p for p in sys.path if p and os.path.isabs(p) and not (p + "/").startswith(below)]
    return lib_t, tuple(dict.fromkeys(path_roots)), tuple(dict.fromkeys(program))


#: The ``pysandboxes`` package's directory (this file is ``pysandboxes/guard/hook.py``).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _table_realpath(tools: Any) -> Callable[[str], str]:
    """How the path table resolves its defaults and protected files to their second spelling:
    by the guard's own resolution of the program's paths (``tools.resolve``: the compiled walk
    where the accelerator is built), so that table and events agree; ``os.path.realpath``
    for Windows paths (``nt._getfinalpathname`` either way)."""

    if tools.windows:
        return os.path.realpath
    resolve = tools.resolve
    return lambda path: resolve(path, None)


def install(policy: Policy, context: RunContext, eval_extension: Any = None) -> None:
    """Arm the Python layer for ``policy`` (see the module docstring); ``eval_extension``:
    what the eval-* rules and learning's evaluations need (``guard.arm``)."""
    # Captured at arm time: the program can reach this module's namespace.
    captured_import_system_file = _IMPORT_SYSTEM_FILE

    kit = capture()
    # Taken before any code of the program runs (it is handed out once per process).
    accelerator = accelerator_module.take(context.accelerator, kit)
    guard_dir = _PACKAGE_DIR
    stdlib_dir = os.path.dirname(os.path.abspath(os.__file__))
    lib_roots, path_roots, program_roots = _roots(context, guard_dir, stdlib_dir)
    home = os.path.expanduser("~")
    denials_token = None
    if context.denials_file:
        denials_token = "".join(list(os.path.abspath(context.denials_file)))
    reporter = make_reporter(context, kit, home, denials_token)
    busy: dict[int, int] = {}

    tools = make_path_tools(
        kit, stdlib_dir, dir_path=accelerator.dir_path, compiled_walk=accelerator.path_walk
    )
    table = files.build_table(policy, context, lib_roots, realpath=_table_realpath(tools))
    net_rows = network.build_rules(policy)
    everything, names = imports.allowed_names(policy)
    if context.program_kind == "module" and context.program:
        names = names | {context.program.partition(".")[0]}  # the program's own package
    threads_or_processes = any(
        rule.action == "ALLOW"
        and (
            rule.target in ("*", "threads", "process-exec")
            or calls_module.category_of(rule.target) in ("threads", "process-exec", None)
        )
        for rule in policy.python_api
    )

    wrappers.install(kit, with_ignore=bool(policy.ignore))
    if reporter.recording:
        from pysandboxes.guard import env

        env.install_recorder(reporter.record)

    identity = kit.identity  # keys of the frame walks' sets (guard/kit.py)
    # The hook's body runs with globals of its own, named by no module (not even builtins):
    # its frame marks the end of the handler's call chain for the frame walks
    # (frames.below_hook), which skip that chain without reading each frame's code.
    hook_globals: dict[str, Any] = {"__builtins__": {}}
    hook_body = _private_copy(_hook_body, hook_globals)
    guard_globals = frozenset(
        identity(module.__dict__)
        for name, module in sys.modules.items()
        if name.startswith("pysandboxes.guard") and module is not None
    ) | {identity(hook_globals)}
    from pysandboxes.guard.native_files import OUTSIDE_SCOPE

    # What the guard's frame clearing released, kept until the hook has returned (see
    # _hook_body): an object of the program's freed there runs its __del__ outside the guard.
    graveyard: list[Any] = []
    frames = make_frames(
        kit,
        accelerator,
        lib_roots,
        path_roots,
        guard_globals,
        busy,
        _program_code(context),
        guard_dir,
        graveyard,
        frozenset({identity(OUTSIDE_SCOPE)}),
        identity(hook_globals),
    )
    call_judge = make_call_judge(policy, reporter, frames)
    launcher_prefix = guard_dir.rstrip("/") + "/launch/"
    caller_file = frames.caller_file

    def launcher_call() -> bool:
        caller = caller_file(())
        return caller is not None and caller.startswith(launcher_prefix)

    def import_system_call() -> bool:
        # The path-based finder lists every sys.path directory it searches (for -c and -m
        # that includes the current directory) whatever the program imports.
        return caller_file(()) == captured_import_system_file

    handler_depth = [0]  # Python signal handlers running (guard/signals.py, guard/files.py)
    file_handlers = files.make_file_handlers(
        table,
        tools,
        reporter,
        use_cache=not threads_or_processes,
        denials_token=denials_token,
        kit_type=kit.type,
        launcher_call=launcher_call,
        import_system_call=import_system_call,
        busy_functions=make_busy(kit, busy),  # for the sqlite3.connect/handle frame check
        getframe=kit.getframe,
        host_tree=context.provider not in files.OWN_TREE_PROVIDERS,
        handler_depth=handler_depth,
    )
    # The trampolines of the program's signal handlers judge again the file an open() being
    # retried after EINTR will use (guard/signals.py).
    plumbing, one_shot = signals.wrapper_plumbing()
    pending_signals, safe_point, take_signals = signals.install(
        kit,
        guard_globals,
        busy,
        frozenset({identity(OUTSIDE_SCOPE)}),
        file_handlers.window_state,
        file_handlers.recheck,
        handler_depth,
        plumbing,
        one_shot,
    )
    net_handlers = network.make_net_handlers(net_rows, kit, reporter, file_handlers.judge, busy)
    dynamic_allowed = call_judge.allowed("builtins.compile")

    import _frozen_importlib

    stash = imports.stash_modules(everything, names, imports.WRAPPED_MODULES)
    if stash:
        sys.meta_path.insert(0, imports.StashFinder(stash, _frozen_importlib.ModuleSpec, kit))
    imports.install_import_check(kit, everything, names)
    # The eval builtins are replaced after the guard's own compile of its import check, which
    # must neither be recorded as the program's evaluation nor go through the replacements.
    if reporter.recording:  # learn/audit: record the eval-* items the program's sources need
        if eval_extension is not None:
            evalbuiltins.install_learning(eval_extension, frames.caller_is_program, reporter.record)
    elif policy.eval_rules:  # eval-*: the three builtins check and rewrite the program's source
        evalbuiltins.install(
            policy,
            eval_extension,
            frames.caller_is_program,
            make_busy(kit, busy),
            kit,
            # partial mode's worker (guarded evaluation's too): a process of its own
            str(context.program_kind) in ("worker", "eval-worker"),
        )
    import_handlers = imports.make_import_handlers(
        everything,
        names,
        stash,
        kit,
        reporter,
        frames,
        call_judge,
        program_roots + path_roots,
        dynamic_allowed,
        file_handlers.writable,
        _make_may_read(table, tools),
    )

    dispatch: dict[str, Handler] = {}
    dispatch.update(call_judge.handlers)
    dispatch.update(file_handlers.handlers)
    dispatch.update(net_handlers.handlers)
    dispatch.update(import_handlers.handlers)
    dispatch.update(
        make_descriptor_handlers(call_judge.judge, file_handlers.judge, tools.fd_path, os.getpid)
    )
    dispatch.update(_tcl_handlers(kit, call_judge))
    dispatch.update(
        _special_handlers(
            kit,
            reporter,
            frames,
            call_judge,
            tools,
            file_handlers.is_ignored,
            busy,
            dynamic_allowed,
            guard_globals,
            (guard_dir.rstrip("/") + "/launch/child.py", "end_guarded"),
        )
    )
    if policy.eval_rules and not reporter.recording:  # guarded_eval's worker: fork, rlimits
        evalbuiltins.let_worker_through(dispatch, busy, kit.get_ident)
    import _functools  # type: ignore[import-not-found]  # functools.partial, without functools

    get: Callable[[str], Any] = dispatch.get
    if reporter.recording:
        get = _settling(get, import_handlers.settle)

    # The hook is a C partial over a function that receives its state as arguments: on a
    # refusal those arguments are deleted before the exception leaves, so the hook's frame (the
    # one guard frame a refusal's traceback must pass through) holds nothing but the event,
    # its arguments and the refusal (see _hook_body).
    hook = _functools.partial(
        hook_body,
        get,
        _make_strip(kit, busy, graveyard, accelerator.code_of),
        pending_signals,
        safe_point,
        take_signals,
        kit.gc_isenabled,
        kit.gc_disable,
        kit.gc_enable,
        graveyard,
    )
    if accelerator.make_gate is not None and not reporter.recording:
        # The compiled gate answers the events no handler takes (while no signal handler is
        # queued and nothing released waits in the graveyard) before the body's frame is made:
        # the body would return at once. Not when recording: then every event first settles
        # the imports (_settling). The table is complete now: nothing adds a handler later.
        hook = accelerator.make_gate(frozenset(dispatch), hook, pending_signals, graveyard)
    sys.addaudithook(hook)


def _private_copy(function: Any, scope: dict[str, Any]) -> Any:
    """``function`` with ``scope`` as its globals (same code, defaults and closure)."""

    copy = type(function)(
        function.__code__, scope, function.__name__, function.__defaults__, function.__closure__
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    return copy


def _make_may_read(table: files.PathTable, tools: Any) -> Callable[[str], bool]:
    """``may_read(path)``: whether the file rules (defaults included) let the program read
    ``path``, symbolic links resolved; for the import search (``imports.make_search``)."""

    access = files.make_access(table)
    resolve = tools.resolve
    readable = (files.RO, files.RW)
    os_error, value_error = OSError, ValueError

    def may_read(path: str) -> bool:
        try:
            real = resolve(path, None)
        except (os_error, value_error):
            return False
        return access(real)[0] in readable

    return may_read


def _tcl_handlers(kit: Any, call_judge: Any) -> dict[str, Handler]:
    """The events of ``guard/tcl.py``: whether a new Tcl interpreter stays whole (the grant),
    and the refusal of a hidden Tcl command."""

    granted = call_judge.allowed("tkinter.Tcl")
    judge_call = call_judge.judge
    list_, str_, type_ = list, str, kit.type

    def on_tcl_granted(args: tuple[Any, ...]) -> None:
        # An exact list, filled with the answer (a forged event learns only that).
        if args and type_(args[0]) is list_:
            args[0].append(granted)

    def on_tcl(args: tuple[Any, ...]) -> None:
        name = args[0] if args and type_(args[0]) is str_ else "?"
        judge_call(
            "tkinter.Tcl",
            "native",
            f"the Tcl command '{name}' reaches files, processes or sockets from C, "
            "with no audit event",
        )

    return {"pysandboxes.tcl.granted": on_tcl_granted, "pysandboxes.tcl": on_tcl}


def _settling(get: Callable[[str], Any], settle: Callable[[], None]) -> Callable[[str], Any]:
    """Learn/audit modes only: ``get`` that first reports the imports whose module has loaded
    since their event (``imports.make_import_handlers``), and a last report at exit (the guard's
    ``atexit`` function is registered first, so it runs after the program's)."""

    import atexit

    atexit.register(settle)

    def settling_get(event: str) -> Any:
        settle()
        return get(event)

    return settling_get


def _hook_body(
    get: Callable[[str], Any],
    strip: Callable[[BaseException], BaseException],
    pending: list[Any],
    safe: Callable[[], bool],
    take: Callable[[], list[Any]],
    gc_isenabled: Callable[[], bool],
    gc_disable: Callable[[], None],
    gc_enable: Callable[[], None],
    graveyard: list[Any],
    event: str,
    args: tuple[Any, ...],
    _base: type[BaseException] = BaseException,  # bound at import: never passed
) -> None:
    """The audit hook (through a partial holding ``get``, ``strip``, the signal queue and the
    collector's switches).

    It looks no name up in this module's namespace (in ``sys.modules``, where the program can
    rebind one with no audit event): the class its ``except`` matches is a positional default.

    A refusal raised by a handler is caught here and leaves without the handlers' frames:
    ``strip`` clears them and drops the traceback, and the names that lead to the guard's
    state are deleted before the exception is raised again. What can be reached from the
    refusal (``gc.garbage`` with ``DEBUG_SAVEALL``, ``frame.f_locals``, neither audited) is then
    this frame alone, holding ``event``, ``args`` and ``refusal``.

    No program code may run while a handler runs: its frames would have the hook's as
    callers, reachable through ``f_back`` with no event. So the cyclic collector (which runs
    ``__del__`` methods and weak-reference callbacks of the program's garbage) is paused for
    the handler, and the Python signal handlers of signals that came while guard code ran are
    queued (``guard/signals.py``): they run here, on every way out, once the judgment is made
    and every name leading to the guard's state is deleted from this frame.
    """

    handler = get(event)
    refusal = None
    if handler is not None:
        paused = gc_isenabled()
        if paused:
            gc_disable()
        try:
            handler(args)
        except _base as caught:  # every exception leaves the same way
            refusal = strip(caught)
        if paused:
            gc_enable()
        del paused
    if not ((pending or graveyard) and safe()):
        if refusal is None:
            return
        del get, strip, handler, pending, safe, take, gc_isenabled, gc_disable, gc_enable
        del graveyard, _base
        raise refusal
    # Signal handlers queued while guard code ran, and what the guard's frame clearing let
    # go of: only now, with every name leading to the guard's state deleted from this frame.
    due = take()
    del get, strip, handler, pending, safe, take, gc_isenabled, gc_disable, gc_enable, _base
    graveyard.clear()  # emptied before its items are released: a __del__ finds nothing
    del graveyard
    for program_handler, signum, frame in due:
        program_handler(signum, frame)
    program_handler = signum = frame = None
    del due, program_handler, signum, frame
    if refusal is not None:
        raise refusal


def _make_strip(
    kit: Any, busy: dict[int, int], graveyard: list[Any], code_of: Callable[[Any], Any]
) -> Callable[[BaseException], BaseException]:
    """``strip(exc)``: clear the frames of ``exc``'s traceback below the hook's own, and return
    ``exc`` without traceback, context or cause (the hook raises it again: the program's
    current exception becomes its context as for any raise)."""
    # Captured at arm time: the program can reach this module's namespace.
    captured_runtimeerror = RuntimeError

    enter, leave = make_busy(kit, busy)
    traceback_type = type(_traceback())
    tb_frame = traceback_type.__dict__["tb_frame"].__get__
    tb_next = traceback_type.__dict__["tb_next"].__get__
    frame_clear = type(sys._getframe()).clear
    set_traceback = BaseException.__dict__["__traceback__"].__set__
    get_traceback = BaseException.__dict__["__traceback__"].__get__
    set_context = BaseException.__dict__["__context__"].__set__
    set_cause = BaseException.__dict__["__cause__"].__set__
    get_context = BaseException.__dict__["__context__"].__get__
    get_cause = BaseException.__dict__["__cause__"].__get__
    f_back = type(sys._getframe()).__dict__["f_back"].__get__  # no audit event
    generator_flags = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR
    list_ = list

    def frames_below(first: Any) -> list[Any]:
        """The frames of the traceback entries after ``first`` (the hook's), in any order.

        Every ``tb_frame`` read is an audit event, which re-enters the hook (about 0.5 us
        each). A finished frame's ``f_back`` (no event) names its caller: when the innermost
        entry's frame reaches the hook's own frame in exactly one step per entry, those steps
        are the entries' frames, read with two events instead of one per entry. Any other
        shape (a generator's frame, whose ``f_back`` is None once it is done; an exception
        raised again after it was caught elsewhere, whose entries are not a chain of callers)
        reads every entry's ``tb_frame``, as before."""

        count = 0
        last = first
        tb = tb_next(first)
        while tb is not None:
            count += 1
            last = tb
            tb = tb_next(tb)
        if not count:
            return []
        frame = tb_frame(last)
        found = [frame]
        while count > 1:
            frame = f_back(frame)
            if frame is None:
                break
            found.append(frame)
            count -= 1
        if count == 1 and frame is not None and f_back(frame) is tb_frame(first):
            return found
        found = list_()
        tb = tb_next(first)
        while tb is not None:
            found.append(tb_frame(tb))
            tb = tb_next(tb)
        return found

    def strip(exc: BaseException) -> BaseException:
        state = enter()
        try:
            tb = get_traceback(exc)
            # The first entry is the hook's frame: the frames below it are cleared.
            below = frames_below(tb) if tb is not None else []
            tb = None
            for frame in below:
                if not code_of(frame).co_flags & generator_flags:
                    kept = frame.f_locals  # released when the hook returns (_hook_body)
                    try:  # noqa: SIM105
                        frame_clear(frame)
                    except captured_runtimeerror:  # still running (cannot happen below the hook)
                        pass
                    graveyard.append(kept)
                    kept = None
            frame = None
            below = []
            # What the refusal let go of is freed after the hook (a context exception of the
            # program's may have a __del__): see _hook_body.
            graveyard.append((get_traceback(exc), get_context(exc), get_cause(exc)))
            set_traceback(exc, None)
            set_context(exc, None)
            set_cause(exc, None)
        finally:
            leave(state)
        return exc

    return strip


def _special_handlers(
    kit: Any,
    reporter: Any,
    frames: Any,
    call_judge: Any,
    tools: Any,
    is_ignored: Callable[[str], bool],
    busy: dict[int, int],
    dynamic_allowed: bool,
    guard_globals: frozenset[int] = frozenset(),
    exit_runner: tuple[str, str] = ("", ""),
) -> dict[str, Handler]:
    # Captured at arm time: the program can reach this module's namespace.
    id_ = kit.identity
    function_type = type(_special_handlers)
    function_globals = function_type.__dict__["__globals__"].__get__
    captured_code_deputies = CODE_DEPUTIES
    captured_frame_attributes = FRAME_ATTRIBUTES
    captured_restricted_attributes = RESTRICTED_ATTRIBUTES
    captured_fd = FD
    captured_not_found = NOT_FOUND
    get_ident = kit.get_ident
    enter, leave = make_busy(kit, busy)
    type_ = kit.type
    list_ = list
    str_ = str
    int_ = int
    bytes_ = bytes
    len_ = kit.len
    caller_is_program = frames.caller_is_program
    survey = frames.survey
    is_library_file = frames.is_library_file
    dir_entry = os.DirEntry
    external = "<frozen importlib._bootstrap_external>"
    import_compile = (
        ("<frozen importlib._bootstrap>", "_call_with_frames_removed"),
        (external, "source_to_code"),
        (external, "get_code"),
    )
    guard_in_chain = frames.guard_in_chain

    import_compile_list = list_(import_compile)
    # The launcher's frame that runs the program's exit functions (launch/child.py's
    # end_guarded calls atexit._run_exitfuncs, C): what an exit function compiles is the
    # program's.
    exit_frame = (str_(exit_runner[0]), str_(exit_runner[1]))

    def is_import_compile(first: list[tuple[str, str]]) -> bool:
        return first == import_compile_list

    def is_import_system(first: list[tuple[str, str]]) -> bool:
        return first[0][0].startswith("<frozen ")

    guard_running = frames.guard_running
    hidden_generator = frames.hidden_generator
    cut_guard_tail = frames.cut_guard_tail
    judge = call_judge.judge
    allowed = call_judge.allowed
    introspection_allowed = allowed("object.__getattr__")
    refuse = reporter.refuse
    text_of = tools.text_of
    resolve = tools.resolve
    fd_path = tools.fd_path
    getcwd = kit.getcwd
    lexical_of = make_lexical(type_, getcwd)  # the file handlers' own (guard/file_refusals.py)
    show = reporter.show_path
    traceback_type = type(_traceback())
    generator_type = type(_generator())
    coroutine_type = type(_coroutine())
    # Keyed by the type's id: hashing the program's class could run its metaclass's __hash__.
    frame_getters = {
        (id_(traceback_type), "tb_frame"): traceback_type.__dict__["tb_frame"].__get__,
        (id_(generator_type), "gi_frame"): generator_type.__dict__["gi_frame"].__get__,
        (id_(coroutine_type), "cr_frame"): coroutine_type.__dict__["cr_frame"].__get__,
    }
    category_of = {entry.function: entry.category for entry in calls_module.REGISTRY}

    def refuse_frame(detail: str) -> None:
        judge("sys._getframe", "introspection", detail)

    def on_getattr(args: tuple[Any, ...]) -> None:
        ident = get_ident()
        if ident in busy:
            return
        name = args[1]
        if type_(name) is not str_ or name not in captured_restricted_attributes:
            return
        if name in captured_frame_attributes and not introspection_allowed:
            # Whoever asks (a library too): never hand out a frame of the guard, or one that
            # the guard's frames called.
            getter = frame_getters.get((id_(type_(args[0])), name))
            if getter is not None:
                state = enter()
                try:
                    frame = getter(args[0])
                    if name == "tb_frame":
                        cut_guard_tail(args[0])
                    running = frame is not None and (
                        guard_running(frame) or (name == "gi_frame" and hidden_generator(frame))
                    )
                finally:
                    leave(state)
                if running:
                    refuse_frame("a frame of the guard")
                    return
        if introspection_allowed:
            return
        if caller_is_program(captured_code_deputies):
            judge("object.__getattr__", "introspection", f"reading the attribute '{name}'")

    def on_setattr(args: tuple[Any, ...]) -> None:
        if get_ident() in busy:
            return
        target = args[0] if args else None
        guard_function = False
        if type_(target) is function_type:
            state = enter()
            try:
                guard_function = id_(function_globals(target)) in guard_globals
            finally:
                leave(state)
        if guard_function:
            # Whoever asks: python-sb's own functions (the hook's body, a handler) run inside
            # the hook; replacing their code or defaults would run the program's code there.
            # (Class attributes raise no event in CPython 3.11: the guard never reads an
            # attribute of its own classes at run time, records included.)
            judge("object.__setattr__", "introspection", "changing python-sb's own code")
        if introspection_allowed:
            return
        name = args[1] if len_(args) > 1 else None
        # An exact str (a forged event could carry a str subclass whose __eq__ would run here).
        if type_(name) is str_ and name == "__code__" and caller_is_program(captured_code_deputies):
            judge("object.__setattr__", "introspection", "assigning '__code__'")

    def program_only(function: str, detail: str) -> Handler:
        """Introspection that libraries do for themselves (``types.coroutine`` rebuilds a code
        object): judged when the program is the caller."""

        def handler(args: tuple[Any, ...]) -> None:
            if introspection_allowed or get_ident() in busy:
                return
            if caller_is_program(captured_code_deputies):
                judge(function, "introspection", detail)

        return handler

    def on_getframe(args: tuple[Any, ...]) -> None:
        if get_ident() in busy or introspection_allowed or not args:
            return
        if guard_in_chain(args[0]):
            refuse_frame("a frame whose callers include the guard")

    def on_compile(args: tuple[Any, ...]) -> None:
        if dynamic_allowed or get_ident() in busy:
            return
        # The import system compiling a module's source file: source_to_code called by
        # get_code, which read the file. (A direct call of source_to_code on a string has the
        # program above it; a direct get_code compiles a real file, judged where it runs.)
        # One walk for both questions (frames.survey): is it the import system's compile, and
        # whose is it.
        codes, caller = survey(3, captured_code_deputies, is_import_compile)
        if codes == import_compile:
            return
        # exec, eval or compile of a string called by C code (the name they give the source):
        # a callable the program handed to C, as the first call of a thread (review
        # r6_dynamic_code_no_caller_frame.py) or as an exit function, which python-sb's
        # launcher runs from end_guarded (tests/e2e/test_guard.py).
        name = args[1] if len_(args) > 1 else None
        of_a_string = type_(name) is str_ and name == "<string>"
        if caller is None:
            # Only deputies' frames: their caller is gone, the source is the program's. No
            # frame at all: C code compiled -- a string handed to it (the program's), or a line
            # of a file (CPython's traceback display parses the line it shows, its REPL the
            # line it read: not the program's evaluation).
            if codes or of_a_string:
                judge("builtins.compile", "dynamic-code", "eval, exec or compile of source text")
        elif not is_library_file(caller) or (of_a_string and codes[0] == exit_frame):
            judge("builtins.compile", "dynamic-code", "eval, exec or compile of source text")

    def on_marshal(args: tuple[Any, ...]) -> None:
        if get_ident() in busy:
            return
        codes, caller = survey(1, captured_code_deputies, is_import_system)
        if not codes or codes[0][0].startswith("<frozen "):
            return  # the import system loading bytecode
        if caller is not None and not is_library_file(caller):
            judge("marshal.loads", "deserialization", None)

    def on_find_class(args: tuple[Any, ...]) -> None:
        if get_ident() in busy:
            return
        module, name = args[0], args[1]
        if type_(module) is str_ and type_(name) is str_:
            judge("pickle.loads", "deserialization", f"loading the global {module}.{name}")
        else:
            judge("pickle.loads", "deserialization", None)

    def on_mmap(args: tuple[Any, ...]) -> None:
        # An exact int: the program can raise this event itself with objects of its own,
        # whose __ne__ would run inside the hook.
        if args and (type_(args[0]) is not int_ or args[0] != -1):
            judge("mmap.mmap", "native", "a memory map of a file")

    def on_call(args: tuple[Any, ...]) -> None:
        function: Any = args[0] if args else None
        if type_(function) is not str_:
            return
        category = category_of.get(function)
        if category is None:
            if function == "gc.set_debug" and not introspection_allowed:
                judge(function, "introspection", "gc.set_debug(DEBUG_SAVEALL): gc.garbage")
            return
        judge(function, category, None)

    def on_stat(args: tuple[Any, ...]) -> None:
        text = text_of(args[0])
        if text is None or text is captured_fd:
            return
        base = None
        dir_fd = args[1] if len_(args) > 1 else -1
        if type_(dir_fd) is int_ and dir_fd >= 0:
            base = fd_path(dir_fd)
        # The written path, made absolute (resolving every link would cost one lstat per
        # component on every os.stat; the content of an ignored file stays refused by open).
        if text.startswith("/"):
            path = text
        else:
            path = (base if base is not None else getcwd()) + "/" + text
        if "/." in path or "//" in path:
            # The name as written (a link whose own name ignore= hides is absent, issue 24,
            # item 7), and where it leads.
            lexical = lexical_of(path, None) or path  # (absolute: never None)
            path = lexical if is_ignored(lexical) else resolve(path, None)
        if is_ignored(path):
            resolved = path
            refuse(
                "file",
                resolved,
                None,
                None,
                None,
                "stat",
                f"No such file or directory: '{show(resolved)}'",
                captured_not_found,
                text,
            )

    def on_filter(args: tuple[Any, ...]) -> None:
        where, found = args[0], args[1]
        if type_(found) is not list_:
            return
        text = text_of(where)
        if text is captured_fd:
            base = fd_path(where)
            if base is None:
                return
        elif text is None:
            return
        else:
            base = resolve(text, None)
        keep = []
        for item in found:
            kind = type_(item)
            if kind is str_ or kind is bytes_:
                name = text_of(item)
            elif kind is dir_entry:
                name = text_of(item.name)
            else:
                name = None
            if type_(name) is not str_:
                keep.append(item)
                continue
            if not is_ignored(base + "/" + name):
                keep.append(item)
        found[:] = keep

    return {
        "object.__getattr__": on_getattr,
        "object.__setattr__": on_setattr,
        "code.__new__": program_only("types.CodeType", "building a code object"),
        "function.__new__": program_only("types.FunctionType", "building a function"),
        "sys._getframe": on_getframe,
        "compile": on_compile,
        "marshal.loads": on_marshal,
        "pickle.find_class": on_find_class,
        "mmap.__new__": on_mmap,
        "pysandboxes.call": on_call,
        "pysandboxes.stat": on_stat,
        "pysandboxes.filter": on_filter,
    }


def _traceback() -> Any:
    try:
        raise RuntimeError
    except RuntimeError as exc:
        return exc.__traceback__


def _generator() -> Any:
    yield None


def _coroutine() -> Any:
    async def probe() -> None:
        return None

    coroutine = probe()
    coroutine.close()
    return coroutine
