"""SQLite opens more files than ``sqlite3.connect``'s argument: ``ATTACH DATABASE`` and
``VACUUM INTO`` open or create a file of the SQL's choosing, with no audit event.

``_sqlite3.connect`` is wrapped (``guard/native_files.py``, in a hidden generator): once the
connection is made, it raises ``pysandboxes.sqlite.authorizer`` and the hook sets an authorizer
on it (``guard/files.py``) before the program holds it. The authorizer judges the file of
``SQLITE_ATTACH`` -- which ``VACUUM INTO`` raises too, with the file name evaluated -- as a
write by the file rules, and denies it (``SQLITE_DENY``) when refused; the refusal is kept for
the thread. A connection made any other way (``sqlite3.Connection(...)`` directly, a factory
class whose ``__init__`` is Python code) is refused at the ``sqlite3.connect/handle`` event:
the hook checks that the C ``__init__`` was called by the wrapper's own frame.

The default factory of the wrapper is a subclass whose statement methods raise the kept
refusal instead of SQLite's bare ``DatabaseError`` ("not authorized") -- a
``RulePermissionError`` naming the missing rule -- and whose ``set_authorizer`` composes the
program's authorizer with the guard's instead of replacing it. Open (documented):
``sqlite3.Connection.set_authorizer`` called on the C base type replaces the guard's authorizer.

Everything here is built at arm time (:func:`build`) and holds what it uses in closures: a
module global looked up at run time could be replaced by the program (``__globals__`` raises no
audit event).
"""

from __future__ import annotations

from pysandboxes.guard.kit import Kit

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (guard/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Before = Callable[[tuple[Any, ...], dict[str, Any]], tuple[tuple[Any, ...], dict[str, Any]]]
    After = Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]


def build(kit: Kit) -> Callable[[Any], tuple[Before, After]]:
    """``for_module(_sqlite3) -> (before, after)`` of the ``connect`` wrapper."""

    audit = kit.audit
    len_ = kit.len
    getattr_ = getattr
    type_of = type

    def classes(module: Any) -> tuple[Any, Any]:
        """(the C ``Connection``, the subclass ``sqlite3.connect`` makes by default)."""

        base_connection = getattr_(module, "Connection")
        base_cursor = getattr_(module, "Cursor")
        error = getattr_(module, "DatabaseError")

        def surfaced(method: Callable[..., Any], of_cursor: bool) -> Callable[..., Any]:
            def call(self: Any, *args: Any, **kwargs: Any) -> Any:
                try:
                    return method(self, *args, **kwargs)
                except error:
                    # Raises the refusal the authorizer kept for this connection, if any.
                    audit("pysandboxes.sqlite.refused", self.connection if of_cursor else self)
                    raise

            call.__name__ = call.__qualname__ = getattr_(method, "__name__", "call")
            call.__doc__ = getattr_(method, "__doc__", None)
            return call

        def cursor(self: Any, factory: Any = None) -> Any:
            return base_connection.cursor(self, guarded_cursor if factory is None else factory)

        def set_authorizer(self: Any, authorizer_callback: Any) -> None:
            """As ``sqlite3.Connection.set_authorizer``; python-sb's own check of ``ATTACH``
            and ``VACUUM INTO`` stays in front of the callback (``None`` removes the
            callback only)."""

            audit("pysandboxes.sqlite.authorizer", self, authorizer_callback)

        names = ("execute", "executemany", "executescript")
        guarded_cursor = type_of(base_cursor)(
            "Cursor",
            (base_cursor,),
            {name: surfaced(getattr_(base_cursor, name), True) for name in names},
        )
        namespace = {name: surfaced(getattr_(base_connection, name), False) for name in names}
        namespace["cursor"] = cursor
        namespace["set_authorizer"] = set_authorizer
        guarded = type_of(base_connection)("Connection", (base_connection,), namespace)
        guarded_cursor.__module__ = guarded.__module__ = "sqlite3"
        return base_connection, guarded

    def for_module(module: Any) -> tuple[Before, After]:
        made: list[tuple[Any, Any]] = []

        def before(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            if not made:  # the module's types exist once it is executed, not at creation
                made.append(classes(module))
            base_connection, guarded = made[0]
            if len_(args) < 6 and kwargs.get("factory", base_connection) is base_connection:
                kwargs = {**kwargs, "factory": guarded}
            return args, kwargs

        def after(connection: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            audit("pysandboxes.sqlite.authorizer", connection, None)
            return connection

        return before, after

    return for_module
