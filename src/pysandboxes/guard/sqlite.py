"""SQLite opens more files than ``sqlite3.connect``'s argument: ``ATTACH DATABASE`` and
``VACUUM INTO`` open or create a file of the SQL's choosing, with no audit event.

The hook installs an authorizer on every connection (the ``sqlite3.connect/handle`` event,
whatever the factory; ``guard/files.py``): ``SQLITE_ATTACH`` -- which ``VACUUM INTO`` raises
too, with the file name evaluated -- is judged as a write of that file by the file rules, and
denied (``SQLITE_DENY``) when refused. SQLite then fails with ``sqlite3.DatabaseError``
("not authorized"), and the refusal itself is kept for the thread.

This module makes the connections of ``sqlite3.connect`` (when the program names no factory
of its own) instances of a subclass whose statement methods raise that refusal instead of the
bare ``DatabaseError`` -- a ``RulePermissionError`` naming the missing rule -- and whose
``set_authorizer`` composes the program's authorizer with the guard's instead of replacing it.
What remains open (documented in docs/python-layer.md): ``sqlite3.Connection.set_authorizer``
called on the base type replaces the guard's authorizer.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from pysandboxes.guard.kit import Kit

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (guard/record.py)
if TYPE_CHECKING:
    from typing import Any


_audit = sys.audit
_mro_of = type.__dict__["__mro__"].__get__
_flags_of = type.__dict__["__flags__"].__get__
_dict_of = type.__dict__["__dict__"].__get__
_IMMUTABLE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: a C type, never a class made in Python


def c_method(cls: Any, name: str) -> Any:
    """``name`` of the C base of ``cls`` (what no Python subclass can override)."""

    for base in _mro_of(cls):
        if _flags_of(base) & _IMMUTABLE:
            method = _dict_of(base).get(name)
            if method is not None:
                return method
    return None


def effective_init(cls: Any) -> Any:
    """The ``__init__`` that instances of ``cls`` run (the first in the MRO)."""

    for base in _mro_of(cls):
        method = _dict_of(base).get("__init__")
        if method is not None:
            return method
    return None


def guarded_init(self: Any, *args: Any, **kwargs: Any) -> None:
    """``__init__`` of the connections python-sb checks: the C ``__init__``, then the guard's
    authorizer before any statement can run. The hook refuses a connection whose class runs
    another ``__init__`` (``sqlite3.connect/handle``)."""

    c_method(type(self), "__init__")(self, *args, **kwargs)
    _audit("pysandboxes.sqlite.authorizer", self, None)


def connect_before(kit: Kit, module: Any) -> Callable[..., Any]:
    """The ``before`` of the ``_sqlite3.connect`` wrapper: the guarded factory unless the
    program names one of its own. The classes are made at the first call (the module's types
    do not exist yet when ``_imp.create_dynamic`` returns it)."""

    made: list[Any] = []
    guarded: dict[int, Any] = {}  # a factory of the program's -> its guarded subclass
    type_ = kit.type

    def before(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not made:
            made.append(_classes(module))
        base_connection, connection = made[0]
        if len(args) >= 6:
            args, factory = (*args[:5], *args[6:]), args[5]
        else:
            factory = kwargs.get("factory", base_connection)
        if factory is base_connection:
            factory = connection
        elif (
            isinstance(factory, type)
            and issubclass(factory, base_connection)
            and effective_init(factory) is effective_init(base_connection)
        ):
            # The program's subclass without an __init__ of its own: the guard's __init__
            # (a subclass defining __init__ could run statements before the authorizer is
            # set: refused by the hook).
            pair = guarded.get(id(factory))
            if pair is None or pair[0] is not factory:
                sub = type_(factory)(factory.__name__, (factory,), {"__init__": guarded_init})
                sub.__qualname__ = factory.__qualname__
                sub.__module__ = factory.__module__
                pair = guarded[id(factory)] = (factory, sub)
            factory = pair[1]
        return args, {**kwargs, "factory": factory}

    return before


def _classes(module: Any) -> tuple[Any, Any]:
    """(the C ``Connection``, the guarded subclass ``sqlite3.connect`` makes by default)."""

    audit = _audit
    base_connection = module.Connection
    base_cursor = module.Cursor
    error = module.DatabaseError

    def surfaced(method: Callable[..., Any], of_cursor: bool) -> Callable[..., Any]:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except error:
                # Raises the refusal the authorizer kept for this connection, if any.
                audit("pysandboxes.sqlite.refused", self.connection if of_cursor else self)
                raise

        call.__name__ = call.__qualname__ = getattr(method, "__name__", "call")
        call.__doc__ = getattr(method, "__doc__", None)
        return call

    class Cursor(base_cursor):  # type: ignore[misc,valid-type]
        execute = surfaced(base_cursor.execute, True)
        executemany = surfaced(base_cursor.executemany, True)
        executescript = surfaced(base_cursor.executescript, True)

    class Connection(base_connection):  # type: ignore[misc,valid-type]
        __init__ = guarded_init
        execute = surfaced(base_connection.execute, False)
        executemany = surfaced(base_connection.executemany, False)
        executescript = surfaced(base_connection.executescript, False)

        def cursor(self, factory: Any = Cursor) -> Any:
            return base_connection.cursor(self, factory)

        def set_authorizer(self, authorizer_callback: Any) -> None:
            """As ``sqlite3.Connection.set_authorizer``; python-sb's own check of ``ATTACH``
            and ``VACUUM INTO`` stays in front of the callback (``None`` removes the
            callback only)."""

            audit("pysandboxes.sqlite.authorizer", self, authorizer_callback)

    for cls, name in ((Cursor, "Cursor"), (Connection, "Connection")):
        cls.__name__ = cls.__qualname__ = name
        cls.__module__ = "sqlite3"

    return base_connection, Connection
