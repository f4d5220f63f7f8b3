"""``eval``, ``exec`` and ``compile`` of a program run by python-sb with ``eval-*`` rules.

The guard (``guard/evalbuiltins.py``) replaces the three builtins; a call whose caller is the
program comes here, a call by a library (``dataclasses``, ``collections.namedtuple``, sympy's
own code generation) goes to the original builtin as before. Source text is checked and run as
:func:`~pysandboxes.evalguard.api.guarded_eval` does, with the default ``eval-*`` profile, in
the program's own process (the in-process bounds: ``docs/eval.md``).

The namespace follows ``eval-namespace``:

- ``closed`` (default): the dictionaries passed to ``eval``/``exec`` are read (data copied,
  functions wrapped, granted modules as views; other objects left out); nothing is written
  back; without dictionaries the source starts empty;
- ``adaptive``: as ``closed``, and the data an ``exec`` binds is written back into the
  dictionary passed (``exec(code, ns); ns["result"]``);
- ``caller``: as ``adaptive``, and without dictionaries the caller's globals and locals are
  read (copied, never shared).
"""

from __future__ import annotations

import builtins
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from pysandboxes.evalguard.engine import Compiled

# The eval machinery (ast, the checker, decimal...) is imported at the first call: learning
# and audit runs install the recording builtins below in every program.
_registered: dict[int, Compiled] = {}
_MODES = {"eval": "eval", "exec": "exec", "single": "exec"}


def _text(source: Any) -> str:
    import ast

    if isinstance(source, ast.AST):
        return ast.unparse(source)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source).decode("utf-8")
    if isinstance(source, str):
        return source
    raise TypeError(f"source must be a string, bytes or AST, not {type(source).__name__}")


def compile_(
    source: Any, filename: Any, mode: str, flags: int = 0, *args: Any, **kwargs: Any
) -> Any:
    """``compile`` by the program: the checked, rewritten code (run it with the guarded
    ``eval``/``exec``); ``ast.PyCF_ONLY_AST`` parses only (a tree runs nothing)."""

    import ast

    from pysandboxes.evalguard import api, engine

    text = _text(source)
    if flags & ast.PyCF_ONLY_AST:
        from pysandboxes.evalguard import runtime

        runtime.set_compiling(True)
        try:
            return ast.parse(text, str(filename), mode)
        finally:
            runtime.set_compiling(False)
    if mode not in _MODES:
        raise ValueError("compile() mode must be 'exec', 'eval' or 'single'")
    compiled = engine.prepare(text, _MODES[mode], api.resolve(None, None))
    if len(_registered) >= 1024:  # as the engine's cache: the oldest entries go first
        _registered.pop(next(iter(_registered)))
    _registered[id(compiled.code)] = compiled
    return compiled.code


#: The import system's module namespaces (identity, not names: a program can rename its own
#: module, not make its frame run in these dictionaries without the builtins below).
_IMPORT_SYSTEM = tuple(
    vars(sys.modules[name])
    for name in ("_frozen_importlib", "_frozen_importlib_external")
    if name in sys.modules
)


def _by_import_system(frame: Any) -> bool:
    """Whether ``frame`` (the caller of a replacement builtin) is the import system executing or
    compiling a module (``_call_with_frames_removed(exec, code, module.__dict__)``,
    ``source_to_code``): whatever a loader returned, that is a module's body, not the program's
    evaluation of a string; the hook's compile and exec events judge it as they do without the
    replacements. ``f_globals`` is read, never ``f_code`` (which raises an audit event)."""

    globals_ = frame.f_globals
    return any(globals_ is namespace for namespace in _IMPORT_SYSTEM)


def _keep_for_import_system(eval_: Any, exec_: Any, compile_: Any) -> None:
    """Bind the real builtins in the import system's own namespaces, where its global lookups
    find them before ``builtins``: a module's compile and exec stay the import system's calls,
    which the hook recognises by their immediate caller (through a replacement, the caller
    would be this file and the import system's compile would count as the program's)."""

    for namespace in _IMPORT_SYSTEM:
        namespace["eval"], namespace["exec"], namespace["compile"] = eval_, exec_, compile_


def _namespaces(frame: Any, globals_: Any, locals_: Any) -> tuple[Any, Any]:
    """The namespaces plain ``eval``/``exec`` would use: with no globals, the caller's globals
    and locals (``frame`` is the caller of the replacement builtin) -- calling the real builtin
    from inside a replacement would otherwise run the source in the replacement's own frame."""

    if globals_ is None:
        globals_ = frame.f_globals
        if locals_ is None:
            locals_ = frame.f_locals
    return globals_, locals_


def run(kind: str, source: Any, globals_: Any, locals_: Any, caller: Any, real: Any) -> Any:
    """``eval``/``exec`` of ``source`` by the program (``caller`` is its frame)."""

    from pysandboxes.evalguard import api, engine

    rules = api.resolve(None, None)
    compiled = _registered.get(id(source))
    if compiled is not None and compiled.code is source:
        pass
    elif type(source).__name__ == "code":
        return real(source, globals_, locals_)  # a code object the guard did not make
    else:
        compiled = engine.prepare(_text(source), "eval" if kind == "eval" else "exec", rules)
    given = [d for d in (globals_, locals_) if isinstance(d, dict)]
    names: dict[str, Any] = {}
    if not given and rules.namespace == "caller" and caller is not None:
        names.update(caller.f_globals)
        names.update(caller.f_locals)
    for mapping in given:
        names.update(mapping)
    names.pop("__builtins__", None)
    ns = engine.namespace(compiled, names, strict=False)
    result = engine.run(compiled, ns)
    if compiled.mode == "exec" and rules.namespace in ("adaptive", "caller") and given:
        given[-1].update(engine.bound_names(ns))
    elif (
        compiled.mode == "exec"
        and rules.namespace == "caller"
        and caller is not None
        and caller.f_locals is caller.f_globals
    ):
        # exec(source) at a module's top level binds in the module, as plain exec does (in a
        # function, plain exec cannot bind the function's locals either)
        caller.f_globals.update(engine.bound_names(ns))
    return result


def install(
    caller_is_program: Callable[[tuple[str, ...]], bool], deputies: tuple[str, ...]
) -> None:
    """Replace the three builtins: the program's calls come to :func:`run`/:func:`compile_`,
    a library's go to the originals (``deputies`` names this file, so that the caller of the
    replacement decides)."""

    real_eval, real_exec, real_compile = builtins.eval, builtins.exec, builtins.compile
    getframe = sys._getframe
    _keep_for_import_system(real_eval, real_exec, real_compile)

    def eval(source: Any, globals: Any = None, locals: Any = None, /) -> Any:
        if _by_import_system(getframe(1)) or not caller_is_program(deputies):
            return real_eval(source, *_namespaces(getframe(1), globals, locals))
        return run("eval", source, globals, locals, getframe(1), real_eval)

    def exec(source: Any, globals: Any = None, locals: Any = None, /, **kwargs: Any) -> Any:
        if _by_import_system(getframe(1)) or not caller_is_program(deputies):
            return real_exec(source, *_namespaces(getframe(1), globals, locals), **kwargs)
        return run("exec", source, globals, locals, getframe(1), real_exec)

    def compile(source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
        if _by_import_system(getframe(1)) or not caller_is_program(deputies):
            return real_compile(source, filename, mode, *args, **kwargs)
        return compile_(source, filename, mode, *args, **kwargs)

    builtins.eval, builtins.exec, builtins.compile = eval, exec, compile  # type: ignore[assignment]


def install_learning(
    caller_is_program: Callable[[tuple[str, ...]], bool],
    deputies: tuple[str, ...],
    record: Callable[[tuple[tuple[str, Any], ...]], None],
) -> None:
    """Learning and audit mode: the program's ``eval``/``exec``/``compile`` of source text run
    as in plain Python, and the ``eval-*`` items the source needs are recorded
    (:mod:`pysandboxes.evalguard.learn`)."""

    # Imported now, before the builtins are replaced: imported at the first evaluation, the
    # learner's own imports ran exec/compile through the wrappers below (caller: the program's
    # frame, under the import system's), which re-entered the half-imported module.
    from pysandboxes.evalguard.learn import constructs

    real_eval, real_exec, real_compile = builtins.eval, builtins.exec, builtins.compile
    getframe = sys._getframe
    _keep_for_import_system(real_eval, real_exec, real_compile)

    def note(source: Any, mode: str) -> None:
        if type(source).__name__ == "code":
            return
        for field, name in constructs(source, mode):
            if field == "unguarded":  # evalguard.learn.UNGUARDED: no eval-* line would do
                record((("kind", "eval"), ("unguarded", "builtins.compile")))
                return
            record((("kind", "eval"), (field, name)))

    def eval(source: Any, globals: Any = None, locals: Any = None, /) -> Any:
        if not _by_import_system(getframe(1)) and caller_is_program(deputies):
            note(source, "eval")
            if globals is None and type(source).__name__ != "code":
                # eval(source) reads the caller's names: replayed, that needs eval-namespace=caller
                record((("kind", "eval"), ("namespace", "caller")))
        return real_eval(source, *_namespaces(getframe(1), globals, locals))

    def exec(source: Any, globals: Any = None, locals: Any = None, /, **kwargs: Any) -> Any:
        if not _by_import_system(getframe(1)) and caller_is_program(deputies):
            note(source, "exec")
            if isinstance(globals, dict) or isinstance(locals, dict):
                # exec(code, ns) then ns["result"]: the bindings must be written back
                record((("kind", "eval"), ("namespace", "adaptive")))
            elif globals is None and type(source).__name__ != "code":
                # exec(source) reads and binds the caller's names
                record((("kind", "eval"), ("namespace", "caller")))
        return real_exec(source, *_namespaces(getframe(1), globals, locals), **kwargs)

    def compile(source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
        if not _by_import_system(getframe(1)) and caller_is_program(deputies):
            note(source, mode)
        return real_compile(source, filename, mode, *args, **kwargs)

    builtins.eval, builtins.exec, builtins.compile = eval, exec, compile  # type: ignore[assignment]
