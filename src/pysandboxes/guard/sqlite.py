"""SQLite opens more files than ``sqlite3.connect``'s argument: ``ATTACH DATABASE`` and
``VACUUM INTO`` open or create a file of the SQL's choosing, with no audit event.

``_sqlite3.connect`` is wrapped (``guard/native_files.py``, in a hidden generator): once the
connection is made, it raises ``pysandboxes.sqlite.authorizer`` and the hook sets an authorizer
on it (``guard/sqlite_handlers.py``) before the program holds it. The authorizer judges the file of
``SQLITE_ATTACH`` -- which ``VACUUM INTO`` raises too, with the file name evaluated -- as a
write by the file rules, and denies it (``SQLITE_DENY``) when refused; the refusal is kept for
the thread. A connection made any other way (``sqlite3.Connection(...)`` directly, a factory
class whose ``__init__`` is Python code) is refused at the ``sqlite3.connect/handle`` event:
the hook checks that the C ``__init__`` was called by the wrapper's own frame. (It cannot get
the authorizer there instead: the C ``__init__`` marks the connection usable only after that
event, and ``set_authorizer`` refuses it until then.)

The default factory of the wrapper is a subclass whose statement methods raise the kept
refusal instead of SQLite's bare ``DatabaseError`` ("not authorized") -- a
``RulePermissionError`` naming the missing rule -- and whose ``set_authorizer`` composes the
program's authorizer with the guard's instead of replacing it. Open (documented):
``sqlite3.Connection.set_authorizer`` called on the C base type replaces the guard's authorizer.

Which file a name opens, and how (:func:`build_uri_parser`): a name that begins ``file:`` is a
URI when ``sqlite3.connect`` gets ``uri=True`` (or when the library is built with
``SQLITE_USE_URI``, as Debian's is). It is judged as SQLite's ``sqlite3ParseUri`` reads it: the
path ends at ``?`` or ``#``; an authority is empty or ``localhost`` (anything else: SQLite opens
nothing); ``%XX`` escapes are decoded, and ``%00`` makes SQLite skip the rest of the path (or
of the option name or value) rather than end it there; the options are ``name=value`` pairs
split at ``&``. ``mode=ro`` opens the file read-only (judged as a *read*), ``rw`` and ``rwc``
read-write (a write), ``memory`` opens no file; several ``mode`` options apply in order, a
wider one after a narrower one making SQLite refuse the open; ``vfs=memdb`` opens no file, a VFS
other than the unix ones is judged as a write. A read-only open of a database in WAL mode
still creates and writes its ``-wal`` and ``-shm`` files, unless ``immutable=1`` (read as
SQLite reads a boolean) says the file cannot change: those two are then judged as writes
(``sqlite_handlers.py`` reads the database header to know). Which ``uri`` value the program
passed is read from the hidden wrapper's frame (``sqlite_handlers.py``); when it is not known,
or ``uri=False``, a ``file:`` name is judged both ways (a URI, and a plain file opened
read-write).

Everything here is built at arm time (:func:`build`) and holds what it uses in closures: a
module global looked up at run time could be replaced by the program (``__globals__`` raises no
audit event).
"""

from __future__ import annotations

from pysandboxes.guard.kit import Kit

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Before = Callable[[tuple[Any, ...], dict[str, Any]], tuple[tuple[Any, ...], dict[str, Any]]]
    After = Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]
    #: (path, writes, side_files, vfs): ``path`` ``None`` when no file is opened; ``writes``:
    #: opened read-write; ``side_files``: a read-only open may still write the WAL files
    #: (no ``immutable``).
    UriOpen = tuple[str | None, bool, bool, str | None]

#: SQLite's open flags (sqlite3.h), as ``sqlite3ParseUri`` combines them.
OPEN_READONLY, OPEN_READWRITE, OPEN_CREATE, OPEN_MEMORY = 0x1, 0x2, 0x4, 0x80
#: What ``sqlite3.connect`` passes to ``sqlite3_open_v2`` (plus SQLITE_OPEN_URI).
CONNECT_FLAGS = OPEN_READWRITE | OPEN_CREATE
#: VFS that open the database file as the default one does (``memdb`` opens none).
UNIX_VFS = frozenset({"unix", "unix-none", "unix-excl"})


def build_uri_parser() -> Callable[[str], UriOpen | None]:
    """``parse(name)`` for a name that begins ``file:``: what SQLite opens for that URI (see
    the module docstring), or ``None`` when SQLite refuses the URI and opens nothing.

    Follows ``sqlite3ParseUri`` (SQLite 3.40) byte for byte on the UTF-8 text SQLite gets.
    """

    bytearray_, bytes_, len_, int_ = bytearray, bytes, len, int
    hexdigits = frozenset(b"0123456789abcdefABCDEF")
    digits = frozenset(b"0123456789")
    modes = {
        b"ro": OPEN_READONLY,
        b"rw": OPEN_READWRITE,
        b"rwc": OPEN_READWRITE | OPEN_CREATE,
        b"memory": OPEN_MEMORY,
    }
    mode_mask = OPEN_READONLY | OPEN_READWRITE | OPEN_CREATE | OPEN_MEMORY
    true_words = (b"yes", b"on", b"true")
    unix_vfs = UNIX_VFS
    # Captured: parse runs in the hook after arming, and this module is in sys.modules, where
    # the program could rebind a constant (attacks/r5_files_sqlite_uri_parser_global.py).
    connect_flags, open_memory, open_readonly = CONNECT_FLAGS, OPEN_MEMORY, OPEN_READONLY
    amp, eq, qmark, hash_, slash, pct = 0x26, 0x3D, 0x3F, 0x23, 0x2F, 0x25

    def boolean(value: bytes) -> bool:
        """``sqlite3GetBoolean(value, 0)``: a number (its low byte), yes/on/true, else no."""

        if value[:1] and value[0] in digits:
            end = 0
            while end < len_(value) and value[end] in digits:
                end += 1
            if end > 9:
                return False  # beyond what this reading is sure of: not immutable
            return (int_(value[:end]) & 0xFF) != 0
        return value.lower() in true_words

    def parse(name: str) -> UriOpen | None:
        uri = name.encode("utf-8", "surrogateescape")
        n = len_(uri)
        i = 5  # after "file:"
        if uri[5:7] == b"//":
            i = 7
            while i < n and uri[i] != slash:
                i += 1
            if i != 7 and uri[7:i] != b"localhost":
                return None  # "invalid uri authority"
        out = bytearray_()
        state = 0  # 0: the path, 1: an option name, 2: an option value
        while i < n and uri[i] != 0 and uri[i] != hash_:
            c = uri[i]
            i += 1
            if c == pct and i + 1 < n and uri[i] in hexdigits and uri[i + 1] in hexdigits:
                c = int_(uri[i : i + 2], 16)
                i += 2
                if c == 0:  # skip to the end of this path, name or value
                    while (
                        i < n
                        and uri[i] != 0
                        and uri[i] != hash_
                        and (state != 0 or uri[i] != qmark)
                        and (state != 1 or (uri[i] != eq and uri[i] != amp))
                        and (state != 2 or uri[i] != amp)
                    ):
                        i += 1
                    continue
            elif state == 1 and c in (amp, eq):
                if out[-1] == 0:  # an empty option name: the option is ignored
                    while i < n and uri[i] != hash_ and uri[i - 1] != amp:
                        i += 1
                    continue
                if c == amp:
                    out.append(0)
                else:
                    state = 2
                c = 0
            elif (state == 0 and c == qmark) or (state == 2 and c == amp):
                c = 0
                state = 1
            out.append(c)
        if state == 1:
            out.append(0)
        out += b"\0\0\0\0"
        items = bytes_(out).split(b"\0")
        path = items[0]
        flags = connect_flags
        vfs: bytes | None = None
        immutable: bytes | None = None
        k = 1
        while k + 1 < len_(items) and items[k]:
            option, value = items[k], items[k + 1]
            k += 2
            if option == b"vfs":
                vfs = value
            elif option == b"cache":
                if value not in (b"shared", b"private"):
                    return None  # "no such cache mode"
            elif option == b"mode":
                mode = modes.get(value, 0)
                if mode == 0 or (mode & ~open_memory) > (mode_mask & flags):
                    return None  # "no such access mode", "access mode not allowed"
                flags = (flags & ~mode_mask) | mode
            elif option == b"immutable" and immutable is None:
                immutable = value  # sqlite3_uri_boolean reads the first one
        vfs_text = None if vfs is None else vfs.decode("utf-8", "surrogateescape")
        if flags & open_memory or path == b":memory:" or vfs == b"memdb":
            return (None, False, False, vfs_text)  # an in-memory database: no file
        path_text = path.decode("utf-8", "surrogateescape")
        if vfs_text is not None and vfs_text not in unix_vfs:
            return (path_text, True, True, vfs_text)  # another VFS: judged as a write
        writes = (flags & open_readonly) == 0
        side_files = not (immutable is not None and boolean(immutable))
        return (path_text, writes, side_files, vfs_text)

    return parse


def is_wal_database(header: bytes, _len: Callable[[Any], int] = len) -> bool:
    """Whether a database file's first 100 bytes say WAL mode (file format versions 2).

    The hook calls it after arming and this module is in ``sys.modules``: ``len`` is a
    positional default, not a name looked up in the module's globals (which the program can
    rebind with no audit event). Callers pass ``header`` alone."""

    return (
        _len(header) >= 20
        and header[:16] == b"SQLite format 3\0"
        and (header[18] == 2 or header[19] == 2)
    )


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

        def cursor(self: Any, *args: Any, **kwargs: Any) -> Any:
            # No factory given: the guarded cursor; any given one -- None included, which
            # CPython refuses with TypeError (issue 27, cause 6) -- goes to the C method.
            if not args and not kwargs:
                return base_connection.cursor(self, guarded_cursor)
            return base_connection.cursor(self, *args, **kwargs)

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


def connect_before_code() -> Any:
    """The code object of the ``connect`` wrapper's ``before`` (:func:`build`): the marker its
    hidden generator's frame names (``native_files.hide_reentrant``), which
    ``sqlite_handlers.py`` looks for to know that a connection is being made by that wrapper.
    Read when the guard is armed (a code object changes nothing, and the program cannot read one
    without an audit event)."""

    for_module = None
    for const in build.__code__.co_consts:
        if getattr(const, "co_name", None) == "for_module":
            for_module = const
    for const in for_module.co_consts if for_module is not None else ():
        if getattr(const, "co_name", None) == "before":
            return const
    raise RuntimeError("python-sb: the SQLite connect wrapper's before is missing")
