"""How a marked function reaches the worker: by value, never by re-importing it by name.

The worker cannot import the caller's ``__main__`` (that would run the whole program again),
nor find a nested function or a method by name. So the parent sends the function itself:

- its code object, ``marshal``-ed, with every code object in it renamed to
  ``<sandboxed>/its/file.py`` (``worker.PROGRAM_PREFIX``): the guard then judges it as the
  program's code wherever the file lives (a tool defined inside site-packages included), and
  the parent shows the real file's lines in the sandboxed traceback;
- the globals its code names (recursively, through nested code objects), its defaults, its
  closure cells' contents and its ``__dict__``, pickled;
- functions and classes that cannot be imported by reference in the worker (defined in
  ``__main__`` or inside a function) are sent by value the same way; other functions, classes
  and modules go by reference and the worker imports their module as the program would (judged
  by ``python-import``);
- another ``@sandbox`` function it calls is sent as the plain function: in the worker it is
  already inside the sandbox.

Globals are captured when the function is first sent to a worker (once per worker): a global
the caller rebinds later is not seen by a worker already running. Limits: classes by value are
rebuilt from their ``__dict__`` with their metaclass (``__slots__`` and ``__init_subclass__``
work; enum classes and other metaclass-built classes of ``__main__`` do not), and generators,
locks, files or sockets cannot cross at all.
"""

from __future__ import annotations

import io
import marshal
import pickle
import sys
import types

from pysandboxes.partial import worker as _w

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Marked functions: the wrapper's ``__sandbox_original__`` points here; filled by the API.
ORIGINALS: dict[int, Any] = {}
#: Classes sent by value, by the token the worker caches them under (one class object in the
#: worker for one class of the caller, whichever pickle brings it).
_CLASSES: dict[int, type] = {}


def _importable(obj: Any) -> bool:
    """Whether ``obj`` can be found again by ``module.qualname`` in a fresh interpreter."""

    module_name = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not module_name or not qualname or module_name == "__main__" or "<locals>" in qualname:
        return False
    module = sys.modules.get(module_name)
    if module is None:
        return False
    target: Any = module
    for part in qualname.split("."):
        target = getattr(target, part, None)
        if target is None:
            return False
    return target is obj


def _renamed(code: types.CodeType) -> types.CodeType:
    consts = tuple(_renamed(c) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    filename = code.co_filename
    if not filename.startswith(_w.PROGRAM_PREFIX):
        filename = _w.PROGRAM_PREFIX + filename
    return code.replace(co_filename=filename, co_consts=consts)


#: Most source lines shipped with a function (its span in its file), and longest line.
MAX_SOURCE_LINES = 2000
MAX_SOURCE_LINE = 1000


def _source(code: types.CodeType) -> tuple[str, int, tuple[str, ...]]:
    """``(file, first line, lines)`` of ``code``'s span in its file, read here from the
    caller's own source: the worker shows them in its tracebacks, and the caller formats only
    the text the worker sends (it never reads a file a worker's frame names, issue 25)."""

    import linecache

    numbers = [code.co_firstlineno]
    pending = [code]
    while pending:
        current = pending.pop()
        numbers.extend(line for _start, _end, line in current.co_lines() if line)
        pending.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    first, last = min(numbers), min(max(numbers), min(numbers) + MAX_SOURCE_LINES)
    try:
        lines = linecache.getlines(code.co_filename)[first - 1 : last]
    except Exception:  # a file that went away: no source shown
        lines = []
    return code.co_filename, first, tuple(line[:MAX_SOURCE_LINE] for line in lines)


def _names(code: types.CodeType, found: set[str]) -> set[str]:
    found.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _names(const, found)
    return found


class _ModuleWithSubmodules:
    """A module global and the submodules its function reads from it."""

    __slots__ = ("name", "subs")

    def __init__(self, name: str, subs: tuple[str, ...]) -> None:
        self.name = name
        self.subs = subs

    def __reduce__(self) -> Any:
        return (_w.import_module, (self.name, self.subs))


class Shipper(pickle.Pickler):
    """A pickler that sends functions and classes by value when they must be (see above)."""

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        if kind is types.FunctionType:
            original = getattr(obj, "__sandbox_original__", None)
            if original is not None:
                return self._function(original)
            if not _importable(obj):
                return self._function(obj)
            return NotImplemented
        if kind is types.ModuleType:
            return (_w.import_module, (obj.__name__,))
        if isinstance(obj, type) and not _importable(obj) and obj.__module__ != "builtins":
            return self._class(obj)
        if kind is staticmethod or kind is classmethod:
            return (kind, (obj.__func__,))
        if kind is property:
            return (property, (obj.fget, obj.fset, obj.fdel, obj.__doc__))
        return NotImplemented

    def _function(self, function: types.FunctionType) -> Any:
        code = function.__code__
        names = _names(code, set())
        glob = function.__globals__
        items = {name: glob[name] for name in names if name in glob}
        for name, value in items.items():
            if type(value) is types.ModuleType:
                # ``import urllib.request`` binds ``urllib``; the code reads ``.request``.
                base = value.__name__
                subs = tuple(sorted(n for n in names if f"{base}.{n}" in sys.modules))
                if subs:
                    items[name] = _ModuleWithSubmodules(base, subs)
        cells = []
        for cell in function.__closure__ or ():
            try:
                cells.append(cell.cell_contents)
            except ValueError:
                cells.append(_w._EMPTY_CELL)
        module = function.__module__ or "__main__"
        state = (
            items,
            function.__defaults__,
            function.__kwdefaults__,
            tuple(cells),
            function.__qualname__,
            {k: v for k, v in function.__dict__.items() if k != "__sandbox_original__"},
            _source(code),
        )
        args = (marshal.dumps(_renamed(code)), module, function.__name__, len(cells))
        return (_w.make_function, args, state, None, None, _w.fill_function)

    def _class(self, cls: type) -> Any:
        base_dict: dict[str, Any] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
        slots = cls.__dict__.get("__slots__")
        if slots is not None:
            base_dict["__slots__"] = slots
        skip = {"__dict__", "__weakref__", "__module__", "__qualname__", "__slots__"}
        if isinstance(slots, str):
            skip.add(slots)
        elif slots is not None:
            skip.update(slots)
        items = {k: v for k, v in cls.__dict__.items() if k not in skip}
        items.pop("__doc__", None)
        base_dict["__doc__"] = cls.__doc__
        token = id(cls)
        _CLASSES[token] = cls  # kept alive: the token must not name another class later
        args = (token, type(cls), cls.__name__, cls.__bases__, base_dict)
        return (_w.make_class, args, items, None, None, _w.fill_class)


def dumps(obj: Any) -> bytes:
    """``obj`` as a pickle the worker decodes (functions and classes by value where needed)."""

    buffer = io.BytesIO()
    Shipper(buffer, _w.PROTOCOL).dump(obj)
    return buffer.getvalue()


def dumps_call(function_id: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes:
    """A call's body: plain ``pickle`` first (fast), the shipping pickler when it must."""

    message = (function_id, args, kwargs)
    try:
        data = pickle.dumps(message, _w.PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return dumps(message)
    if b"__main__" in data:  # a class of the caller's __main__: the worker has none of it
        return dumps(message)
    return data
