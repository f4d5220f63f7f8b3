"""The audit hook's optional compiled accelerator, and the pure-Python code it stands for.

The frame walks of :mod:`pysandboxes.guard.frames` read each frame's ``f_code``, and that read
raises the ``object.__getattr__`` audit event, which re-enters the hook (about a microsecond
each; the hook ignores it, the thread being busy). ``sys._getframe`` raises an event likewise.
And every audit event of the interpreter runs the hook's Python body, even those that no
handler takes. ``_accelerator.c``, built when the package is installed (``setup.py``), does
the same in C, where no event is raised and no Python frame is made:

==========================  =============================================  ==================
function                    meaning                                        pure Python
==========================  =============================================  ==================
``code_of(frame)``          ``frame.f_code``                               the attribute read
``frame_at(depth)``         ``sys._getframe(depth)`` of the calling code   ``sys._getframe``
``in_chain(f, ids)``        frame ``f`` or a caller has globals whose      a loop over
                            identity (``kit.identity``) is in ``ids``      ``f_back``
``make_gate(...)``          the audit hook in front of the hook's body:    ``None``: the body
                            an event no handler takes, while no signal     is the hook
                            handler or released object waits, answered
                            at once
``dir_path(raw)``           the kernel's name of a directory (``O_PATH``   ``None``: the
                            open, ``/proc/self/fd``), with no ``open``     hidden
                            event (``guard/paths.py``'s                    ``posix.open``
                            ``kernel_resolve``)                            (``paths.py``)
``path_walk(path, start)``  ``guard/paths.py``'s walk of a path (one       ``None``: the
                            ``lstat`` per component, links followed) on    Python walk
                            the file system's bytes, without the GIL;
                            on Linux a path of three components or more
                            first asked of the kernel (``openat2``,
                            ``RESOLVE_NO_SYMLINKS``): with no link on
                            its way, the walk's answer is the lexical
                            one, in two or three calls; ``None`` for
                            text that does not encode or holds a NUL
                            (the Python walk answers)
``walk(n, d, e, state)``    ``guard/frames.py``'s walk for the caller,     ``None``: the
                            its deputy tests answered from the same        Python ``walk``
                            caches (a miss calls the same Python
                            predicates)
==========================  =============================================  ==================

The answers are the same either way: ``tests/unit/guard/test_accelerator.py`` compares them,
and CI runs the red-team corpora and the conformance matrix both ways
(``PYSANDBOXES_ACCELERATOR=off``, scripts/test.sh).

**Out of the program's reach.** In a program's hands ``code_of`` and ``frame_at`` would be
introspection without an event. The compiled module holds ``take``, which builds the functions
(none is stored in the module) and hands them out once per process, and ``compile_program``,
which is builtin ``compile`` of source without its ``ast`` check (the launcher compiles the
program's code with it, ``launch/child.py`` ``program_compiler``; it raises the same
``compile`` audit event, which the guard judges: review attack
``r8_dynamic_code_by_the_accelerators_compile``). :func:`take`
calls it when the guard is armed, before any code of the program runs, and removes the module
from ``sys.modules`` and from its package. A program that imports it again gets a module whose
``take`` raises ``RuntimeError``. The functions are kept only in the closures of the hook's
state (frames, the hook), which no function the program can reach holds (``guard/kit.py``).

**The choice** (``PYSANDBOXES_ACCELERATOR`` of the python-sb command, read by the parent,
``runtime.accelerator_choice``, and handed to the child in its run context): ``auto`` (the
default: compiled when it was built and loads, pure Python otherwise), ``off`` (pure Python;
the compiled module is still taken, so that nothing else can take it), ``require`` (a run whose
accelerator cannot be loaded stops before the program).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NamedTuple

    from pysandboxes.guard.kit import Kit
else:
    from pysandboxes.record import NamedTuple

#: The compiled module's name.
MODULE = "pysandboxes.guard._accelerator"


class Accelerator(NamedTuple):
    """The functions of the table above, compiled or pure Python (``compiled`` says which)."""

    code_of: Callable[[Any], Any]
    frame_at: Callable[[int], Any]
    in_chain: Callable[[Any, frozenset[int]], bool]
    make_gate: Callable[[frozenset[str], Any, list[Any], list[Any]], Any] | None
    dir_path: Callable[[bytes], str | None] | None
    path_walk: Callable[..., str | None] | None  # (path, start[, quick])
    walk: Callable[[int, tuple[str, ...], Any, tuple[Any, ...]], Any] | None
    compiled: bool


def take(choice: str, kit: Kit) -> Accelerator:
    """The accelerator for ``choice`` (``runtime.ACCELERATOR_CHOICES``), taken once, at arming.

    ``kit``: the guard's captured primitives, for the pure-Python functions. Raises
    ``RuntimeError`` when ``choice`` is ``require`` and the compiled module cannot be loaded,
    and when it was already handed out in this process (nothing but the guard may take it)."""

    parts = None
    reason = ""
    try:
        from pysandboxes.guard import _accelerator  # type: ignore[attr-defined]
    except ImportError as exc:
        reason = str(exc) or type(exc).__name__
    else:
        parts = _accelerator.take()
    finally:
        sys.modules.pop(MODULE, None)
        package = sys.modules.get("pysandboxes.guard")
        if package is not None:
            package.__dict__.pop("_accelerator", None)
    if parts is None and choice == "require":
        raise RuntimeError(
            "python-sb: PYSANDBOXES_ACCELERATOR=require, and the compiled accelerator does not "
            f"load ({reason}); reinstall python-sb where a C compiler and Python's headers are"
            " present"
        )
    if parts is not None and choice != "off":
        code_of, frame_at, in_chain, make_gate, dir_path, path_walk, walk = parts
        return Accelerator(code_of, frame_at, in_chain, make_gate, dir_path, path_walk, walk, True)
    return _pure(kit)


def _pure(kit: Kit) -> Accelerator:
    """The pure-Python functions of the same meaning."""

    import _operator  # type: ignore[import-not-found,unused-ignore]  # operator's C half

    getframe, identity, type_ = kit.getframe, kit.identity, kit.type
    frame_type = type_(getframe(0))

    def in_chain(frame: Any, scopes: frozenset[int]) -> bool:
        """Whether ``frame`` or one of its callers has globals in ``scopes`` (no event); not
        for what is not a frame (a forged ``sys._getframe`` event's object: no attribute of
        the program's is read in the hook)."""

        if type_(frame) is not frame_type:
            return False
        while frame is not None:
            if identity(frame.f_globals) in scopes:
                return True
            frame = frame.f_back
        return False

    # sys._getframe is a C function too: called from a walk, depth 0 is the walk's frame, as
    # for the compiled frame_at.
    return Accelerator(
        _operator.attrgetter("f_code"), getframe, in_chain, None, None, None, None, False
    )


def describe(environ: Any) -> dict[str, Any]:
    """For ``--explain`` (in python-sb's own process, where nothing is taken): the choice of
    ``environ`` and whether the compiled module is there for this interpreter. ``compiled``
    says what a run would use (a module that is there but fails to load falls back to pure
    Python at the run's start, or stops it under ``require``)."""

    from importlib.util import find_spec

    from pysandboxes.runtime import accelerator_choice

    try:
        choice = accelerator_choice(environ)
    except ValueError as exc:
        return {"choice": None, "built": False, "compiled": False, "error": str(exc)}
    try:
        spec = find_spec(MODULE)
    except (ImportError, ValueError):
        spec = None
    built = spec is not None and spec.origin is not None
    return {
        "choice": choice,
        "built": built,
        "file": spec.origin if built and spec is not None else None,
        "compiled": built and choice != "off",
        "error": None,
    }
