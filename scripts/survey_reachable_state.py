"""Survey of the guard's state a sandboxed program reaches with no audit event (review r5).

Run it *under python-sb*, from a directory whose ``.py-sandboxes`` allows what it loads and
grants ``introspection`` (only so that the survey can print each function's free-variable
names; nothing it follows needs the grant)::

    expose-ro=.
    expose-rw=./out
    ignore=./.env
    python-import=*
    python-api=ALLOW:threads
    python-api=ALLOW:introspection
    eval-syntax=arith

    python-sb --os-sandbox=subprocess scripts/survey_reachable_state.py out/report.txt

It loads the wrapped modules, then walks everything reachable from ``sys.modules`` and the
builtins -- closures, defaults, keyword defaults, function dicts, bound methods' owners,
``__wrapped__``, properties, containers, class members and MROs -- and writes, for every
function of python-sb it met (``pysandboxes.*`` globals, or the hidden generators' rebuilt
scope), its closure cells, defaults and keyword defaults, with the path that led there. A
builtin held there that its module no longer exposes (an original the guard hid) is marked
``!!ORIGINAL``: after review r5 only the real ``compile``/``eval``/``exec`` in the ``eval-*``
builtins' closures are, and CPython's own ``compile``/``exec`` events judge them. Reading the
report: every cell or default the program can rewrite, and every mutable object in one, must
decide nothing the guard judges (docs/security-model.md, "State the guard uses after arming").
"""

from __future__ import annotations

import builtins
import contextlib
import sys
from typing import Any

MODULES = (
    "sqlite3", "threading", "signal", "socket", "ssl", "pwd", "grp", "subprocess",
    "multiprocessing", "multiprocessing.shared_memory", "asyncio", "mmap", "shutil",
    "tempfile", "pathlib", "logging", "pickle", "select", "selectors", "fcntl", "resource",
    "zipimport", "runpy", "inspect", "traceback", "weakref", "_thread", "_posixsubprocess",
    "faulthandler", "tracemalloc", "readline", "_tkinter", "tkinter", "http.client",
    "urllib.request", "importlib", "importlib.util", "pysandboxes", "pysandboxes.evalguard.api",
    "pysandboxes.partial", "_ssl", "_sqlite3", "_multiprocessing", "_posixshmem", "posix", "gc",
    "zipfile", "hashlib", "_hashlib", "_imp", "concurrent.futures",
)  # fmt: skip
FUNCTION = type(lambda: 0)
BUILTIN = type(len)
MODULE = type(sys)


def load() -> dict[str, Any]:
    """Import what the rules allow, and make the objects whose classes the guard replaces."""

    for name in MODULES:
        try:
            __import__(name)
        except BaseException as exc:  # a refused or missing module: surveyed without it
            print("not loaded:", name, type(exc).__name__)
    made: dict[str, Any] = {}
    makers: tuple[tuple[str, Any], ...] = (
        ("ssl_context", lambda: sys.modules["ssl"].SSLContext(2)),  # PROTOCOL_TLS_CLIENT
        ("sqlite_connection", lambda: sys.modules["sqlite3"].connect(":memory:")),
        ("tcl", lambda: sys.modules["tkinter"].Tcl()),
    )
    for label, make in makers:
        try:
            made[label] = make()
        except BaseException as exc:
            print("not made:", label, type(exc).__name__)
    return made


def is_guard(function: Any) -> bool:
    """A function of python-sb: its globals are a ``pysandboxes`` module's, or the rebuilt
    scope of the hidden generators (``native_files.outside``: ``__builtins__`` alone)."""

    if type(function) is not FUNCTION:
        return False
    scope = function.__globals__
    name = scope.get("__name__")
    return (type(name) is str and name.startswith("pysandboxes")) or set(scope) == {"__builtins__"}


def describe(value: Any) -> str:
    try:
        if type(value) is BUILTIN:
            owner = getattr(value, "__self__", None)
            if type(owner) is MODULE:
                shown = owner.__dict__.get(value.__name__)
                hidden = "" if shown is value else "  !!ORIGINAL"
                return f"builtin {owner.__name__}.{value.__name__}{hidden}"
            return f"builtin {type(owner).__name__}.{value.__name__}"
        qualname = getattr(value, "__qualname__", None)
        if type(qualname) is str:
            return f"{type(value).__name__} {getattr(value, '__module__', None)}.{qualname}"
        return f"{type(value).__name__} {repr(value)[:100]}"
    except BaseException:
        return f"<{type(value).__name__}>"


class Survey:
    """The walk: ``seen`` by id (walked again when first met outside a guard closure)."""

    def __init__(self) -> None:
        self.seen: dict[int, bool] = {}
        self.lines: list[str] = []

    def walk(self, value: Any, path: str, depth: int, via_guard: bool) -> None:
        if depth > 14 or type(value) is MODULE:
            return
        before = self.seen.get(id(value))
        if before is not None and (before or not via_guard):
            return
        self.seen[id(value)] = via_guard
        guard = is_guard(value)
        if type(value) is FUNCTION:
            self.function(value, path, depth, guard or via_guard, guard)
        for attr in ("__self__", "__func__", "__wrapped__", "fget", "fset", "fdel"):
            try:
                found = getattr(value, attr)
            except BaseException:
                continue
            if found is not None:
                self.walk(found, f"{path}.{attr}", depth + 1, via_guard or guard)
        with contextlib.suppress(BaseException):  # an odd object: skipped, not the survey
            self.members(value, path, depth, via_guard)

    def function(self, value: Any, path: str, depth: int, via: bool, guard: bool) -> None:
        names = value.__code__.co_freevars  # needs the introspection grant
        found: list[tuple[str, Any]] = []
        for name, cell in zip(names, value.__closure__ or (), strict=True):
            with contextlib.suppress(ValueError):  # an empty cell
                found.append((f"cell {name}", cell.cell_contents))
        found += [(f"default[{i}]", v) for i, v in enumerate(value.__defaults__ or ())]
        found += [(f"kwdefault {k}", v) for k, v in (value.__kwdefaults__ or {}).items()]
        found += [(f"__dict__ {k}", v) for k, v in value.__dict__.items()]
        for label, item in found:
            if guard:
                self.lines.append(f"{describe(value)} :: {label} = {describe(item)}   <= {path}")
            self.walk(item, f"{path}.<{label}>", depth + 1, via)

    def members(self, value: Any, path: str, depth: int, via: bool) -> None:
        kind = type(value)
        if kind in (list, tuple, set, frozenset) or kind.__name__ == "Kit":
            for i, item in enumerate(list(value)[:400]):
                self.walk(item, f"{path}[{i}]", depth + 1, via)
        elif kind is dict:
            for key, item in list(value.items())[:3000]:
                self.walk(item, f"{path}[{key!r}]"[:300], depth + 1, via)
        elif isinstance(value, type):
            for key, item in list(vars(value).items()):
                self.walk(item, f"{path}.{key}", depth + 1, via)
            for base in value.__mro__[1:]:
                self.walk(base, f"{path}.__mro__:{base.__name__}", depth + 1, via)
        else:
            namespace = getattr(value, "__dict__", None)
            if type(namespace) is dict and kind is not FUNCTION:
                for key, item in list(namespace.items())[:300]:
                    self.walk(item, f"{path}.{key}", depth + 1, via)
            if kind.__module__ != "builtins":
                self.walk(kind, f"type({path})", depth + 1, via)


def main() -> None:
    made = load()
    survey = Survey()
    roots: list[tuple[str, Any]] = []
    for name, module in sorted(sys.modules.items()):
        namespace = getattr(module, "__dict__", None)
        if type(namespace) is dict:
            roots += [(f"{name}.{key}", value) for key, value in list(namespace.items())]
    roots += [(f"builtins.{key}", value) for key, value in vars(builtins).items()]
    roots += [(label, value) for label, value in made.items()]
    for path, value in roots:
        try:
            survey.walk(value, path, 0, False)
        except BaseException as exc:
            print("walk stopped at", path, type(exc).__name__)
    with open(sys.argv[1] if len(sys.argv) > 1 else "report.txt", "w") as out:
        for line in sorted(set(survey.lines)):
            out.write(line + "\n")
    print(len(survey.seen), "objects walked,", len(set(survey.lines)), "guard cells and defaults")


if __name__ == "__main__":
    main()
