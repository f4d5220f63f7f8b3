"""The handlers of SQLite's file events (``guard/sqlite.py`` says which files SQLite opens):
``sqlite3.connect``'s database, the authorizer set on every connection the hidden
``_sqlite3.connect`` wrapper makes, and the ``ATTACH DATABASE`` / ``VACUUM INTO`` files it
reports.

:func:`make_database_judge` judges a database file as SQLite opens it (a ``file:`` URI's mode,
the WAL files of a read-only open); :func:`make_connect_call` reads the hidden wrapper's frame,
so that an event the program raises itself cannot claim to come from it;
:func:`make_sqlite_handlers` returns the handlers, by event name.

Every function here is a factory called when the guard is armed: what its closures use is
passed in or captured then (no module global is read after arming).
"""

from __future__ import annotations

import os
import stat as stat_module
import sys

from pysandboxes.guard import sqlite as sqlite_module
from pysandboxes.guard.denials import PERMISSION
from pysandboxes.guard.paths import FD

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from pysandboxes.guard.denials import Reporter
    from pysandboxes.guard.paths import PathTools

    Info = tuple[str | None, str | None]  # (rule text, origin) of the deciding row
    Access = Callable[[str], tuple[int, Info | None]]
    Handler = Callable[[tuple[Any, ...]], None]
    JudgeText = Callable[..., str | None]  # (given, base, write, missing=NO_CHECK)
    Busy = tuple[Callable[[], Any], Callable[[Any], None]]


def make_wal_mode(busy_functions: Busy | None) -> Callable[[str], bool]:
    """``wal_mode(path)`` (see the closure). ``busy_functions``: ``(enter, leave)`` of the
    guard's own operations (``hook.make_busy``); ``None``: the header cannot be read."""

    is_wal_database = sqlite_module.is_wal_database
    os_open, os_read, os_close, fstat = os.open, os.read, os.close, os.fstat
    # The POSIX flags where they exist (Windows has none of them: O_RDONLY | O_BINARY there).
    wal_open_flags = os.O_RDONLY | getattr(os, "O_BINARY", 0)
    for flag in ("O_NONBLOCK", "O_CLOEXEC", "O_NOCTTY"):
        wal_open_flags |= getattr(os, flag, 0)
    os_error = OSError
    is_regular = stat_module.S_ISREG

    def wal_mode(path: str) -> bool:
        """Whether ``path`` is a database in WAL mode (a read-only open of it still writes its
        ``-wal`` and ``-shm`` files). Its header is read by the guard itself: a regular file
        only (``O_NONBLOCK``: a FIFO never blocks the hook)."""

        if busy_functions is None:
            return True  # cannot look: judged as the stricter case
        enter, leave = busy_functions
        state = enter()
        try:
            try:
                fd = os_open(path, wal_open_flags)
            except os_error:
                return False  # no file: a read-only open fails, writing nothing
            try:
                if not is_regular(fstat(fd).st_mode):
                    return False
                header = os_read(fd, 100)
            except os_error:
                return True
            finally:
                os_close(fd)
        finally:
            leave(state)
        return is_wal_database(header)

    return wal_mode


def make_cannot_open_missing(
    *,
    tools: PathTools,
    access: Access,
    codes: tuple[int, int, int, int],
    parent_needed: int,
    recording: bool,
    host_tree: bool,
    kit_type: Callable[[object], type],
    would_be_missing: Callable[[str, int], bool],
) -> Callable[[str], None]:
    """``cannot_open_missing(text)`` (see the closure)."""

    none_code, _ro_code, rw_code, ignored_code = codes
    resolve = tools.resolve
    type_ = kit_type
    modules = sys.modules  # the dict itself: the program may replace entries, not it
    getattr_, issubclass_, exception_, type_type = getattr, issubclass, Exception, type

    def cannot_open_missing(text: str) -> None:
        """SQLite fails with ``OperationalError: unable to open database file`` (and creates
        nothing) when the database's directory does not exist: a refused database there gets
        that error rather than the refusal (issue 27, cause 1), as ``refuse_path`` does for
        ``FileNotFoundError``; nothing is reported. Only when SQLite's own module is loaded
        (this is the event of its ``connect``)."""

        resolved = resolve(text, None)
        code, _row = access(resolved)
        if code in (rw_code, ignored_code) or recording:
            return
        if not (host_tree or code != none_code) or not would_be_missing(resolved, parent_needed):
            return
        module = modules.get("_sqlite3")
        error: Any = getattr_(module, "OperationalError", None) if module is not None else None
        if type_(error) is not type_type or not issubclass_(error, exception_):
            return
        exc = error("unable to open database file")
        exc.sqlite_errorcode = 14  # SQLITE_CANTOPEN
        exc.sqlite_errorname = "SQLITE_CANTOPEN"
        raise exc

    return cannot_open_missing


def make_wal_files_judge(
    reporter: Reporter,
    access: Access,
    rw_code: int,
    is_protected: Callable[[str], bool],
    judge_text: JudgeText,
) -> Callable[[str], None]:
    """``judge_wal_files(database)``: a read-only open of a database in WAL mode still creates
    and writes its ``-wal`` and ``-shm`` files, judged as writes (learning records them as
    such); refused with a message that says how to open it without them."""

    refuse = reporter.refuse
    recording = reporter.recording
    show = reporter.show_path
    permission = PERMISSION

    def judge_wal_files(database: str) -> None:
        for side in (database + "-wal", database + "-shm"):
            code, _row = access(side)
            if recording or (code == rw_code and not is_protected(side)):
                judge_text(side, None, True)
                continue
            shown = show(database)
            refuse(
                "file",
                side,
                None,
                None,
                None,
                "write",
                f"Opening SQLite database '{shown}' read-only DENIED: it is in WAL mode, so "
                f"SQLite still creates and writes '{shown}-wal' and '{shown}-shm', which no "
                "expose-rw rule covers; add immutable=1 to the URI when the file does not "
                "change while the program runs (file:...?mode=ro&immutable=1), or expose its "
                "directory read-write",
                permission,
                None,
                (("kind", "file"), ("op", "write"), ("path", side)),
            )
            return

    return judge_wal_files


def make_database_judge(
    tools: PathTools,
    unsupported: Callable[[Any], None],
    judge_text: JudgeText,
    wal_mode: Callable[[str], bool],
    judge_wal_files: Callable[[str], None],
    cannot_open_missing: Callable[[str], None],
) -> Callable[..., None]:
    """``judge_database(database, uri=None)`` (see the closure)."""

    text_of = tools.text_of
    fd_mark = FD
    parse_uri = sqlite_module.build_uri_parser()

    def judge_database(database: Any, uri: bool | None = None) -> None:
        """A database file SQLite opens: ``sqlite3.connect``'s argument, an ``ATTACH``'d file,
        the target of ``VACUUM INTO``. A ``file:`` URI is judged as SQLite reads it
        (``guard/sqlite.py``): ``mode=ro`` is a read (plus the WAL files of a database in WAL
        mode, unless ``immutable=1``), ``mode=memory`` opens nothing. ``uri``: the
        ``sqlite3.connect`` argument when known; unless it is ``True`` a ``file:`` name is also
        judged as the plain file SQLite would open read-write."""

        text = text_of(database)
        if text is fd_mark or text is None:
            if text is None:
                unsupported(database)
            return
        if text in ("", ":memory:"):
            return
        if text.startswith("file:"):
            opened = parse_uri(text)  # None: SQLite refuses the URI and opens nothing
            path = None if opened is None else opened[0]
            if opened is not None and path:  # "": a temporary database, no file of ours
                _path, writes, side_files, _vfs = opened
                resolved = judge_text(path, None, writes)
                if not writes and side_files and resolved is not None and wal_mode(resolved):
                    judge_wal_files(resolved)
            if uri is True:
                return
        cannot_open_missing(text)
        judge_text(text, None, True)

    return judge_database


def _code_named(code: Any, name: str) -> Any:
    """The code object of the function ``name`` defined in ``code`` (arm time only)."""

    for const in code.co_consts:
        if getattr(const, "co_name", None) == name:
            return const
    raise LookupError(name)


def make_connect_call(
    busy_functions: Busy | None, getframe: Callable[[int], Any] | None
) -> Callable[..., tuple[Any, Any] | None]:
    """``connect_call(depth=4)`` (see the closure)."""

    from pysandboxes.guard.native_files import hide_reentrant

    one_shot_code = _code_named(hide_reentrant.__code__, "one")
    connect_marker = sqlite_module.connect_before_code()

    def connect_call(depth: int = 4) -> tuple[Any, Any] | None:
        """``(args, kwargs)`` of the hidden ``_sqlite3.connect`` wrapper when the event being
        judged was raised inside the C ``__init__`` called by that wrapper itself, with no
        Python frame between (no ``__init__`` of a factory, no ``__del__`` run by the
        collector): the frame that called into C is the one-shot generator of a hidden original
        (``wrappers.hide``) whose marker is the SQLite ``before``'s code -- of the hidden C
        functions, only ``_sqlite3.connect`` makes connections. ``None`` otherwise."""

        if busy_functions is None or getframe is None:
            return None
        enter, leave = busy_functions
        state = enter()
        try:
            # this function, its caller here, the handler, the hook body, the caller
            frame: Any = getframe(depth)
            if frame.f_code is not one_shot_code:
                return None
            found: Any = frame.f_locals
            # The generator's marker (it names no before/after while the original runs).
            if found.get("marker") is not connect_marker:
                return None
            return found.get("args"), found.get("kwargs")
        finally:
            leave(state)

    return connect_call


def make_connect_uri(
    kit_type: Callable[[object], type], connect_call: Callable[..., tuple[Any, Any] | None]
) -> Callable[[], bool | None]:
    """``connect_uri()`` (see the closure); it calls ``connect_call`` itself, so that the frame
    ``connect_call`` reads is the same as for the handler's own call."""

    type_ = kit_type
    str_ = str
    int_ = int
    tuple_ = tuple
    len_ = len
    dict_ = dict
    dict_items = dict.items
    str_eq = str.__eq__

    def connect_uri() -> bool | None:
        """The ``uri`` argument the hidden ``_sqlite3.connect`` wrapper passed (``True`` or
        ``False``), when the ``sqlite3.connect`` event being judged comes from it; else
        ``None``. Read from the wrapper's frame, as ``made_by_connect`` does: an event the
        program raises itself cannot claim it."""

        found = connect_call()
        if found is None:
            return None
        args, kwargs = found
        value: Any = None
        if type_(args) is tuple_ and len_(args) > 7:
            value = args[7]
        if type_(kwargs) is dict_:
            for key, item in dict_items(kwargs):
                if type_(key) is str_ and str_eq(key, "uri"):
                    value = item
        if value is None or value is False:
            return False
        if value is True:
            return True
        if type_(value) is int_:
            return value != 0  # type: ignore[no-any-return]
        return None  # another object: CPython calls its __bool__, not judged here

    return connect_uri


def make_authorizers(
    kit_type: Callable[[object], type], pending: dict[int, tuple[int, BaseException]]
) -> tuple[Callable[[Any, str], Any], Callable[[Any, Any], Callable[..., int]]]:
    """``(c_method, make_authorizer)``: the C ``set_authorizer`` of a connection's class (not
    one the program defined), and the guard's authorizer composed with the program's
    ``callback``. ``pending``: thread -> (connection id, refusal) of a refused ``ATTACH``."""

    from _thread import get_ident

    audit = sys.audit  # captured at arm time, as guard/kit.py does
    sqlite_attach, sqlite_ok, sqlite_deny = 24, 0, 1  # SQLITE_ATTACH, SQLITE_OK, SQLITE_DENY
    type_ = kit_type
    id_ = id
    base_exception = BaseException
    mro_of = type.__dict__["__mro__"].__get__
    flags_of = type.__dict__["__flags__"].__get__
    dict_of = type.__dict__["__dict__"].__get__
    immutable = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: a C type, never a class made in Python
    function_type = type(_code_named)  # a plain Python function's type
    function_name = function_type.__dict__["__name__"].__get__
    function_qualname = function_type.__dict__["__qualname__"].__get__

    def c_method(cls: Any, name: str) -> Any:
        for base in mro_of(cls):
            if flags_of(base) & immutable:
                method = dict_of(base).get(name)
                if method is not None:
                    return method
        return None

    def make_authorizer(connection: Any, callback: Any) -> Callable[..., int]:
        key = id_(connection)

        def authorizer(action: int, arg1: Any, arg2: Any, database: Any, trigger: Any) -> int:
            if action == sqlite_attach:
                try:
                    audit("pysandboxes.sqlite.attach", arg1)
                except base_exception as exc:  # the refusal: kept for the statement's caller
                    pending[get_ident()] = (key, exc)
                    return sqlite_deny
            if callback is None:
                return sqlite_ok
            return callback(action, arg1, arg2, database, trigger)  # type: ignore[no-any-return]

        if type_(callback) is function_type:
            # An authorizer that raises is reported (sys.unraisablehook) under the callable
            # SQLite holds: the program's name, as without the guard (read by the C getter).
            authorizer.__name__ = function_name(callback)
            authorizer.__qualname__ = function_qualname(callback)
        return authorizer

    return c_method, make_authorizer


def make_sqlite_handlers(
    *,
    reporter: Reporter,
    tools: PathTools,
    kit_type: Callable[[object], type],
    access: Access,
    codes: tuple[int, int, int, int],
    parent_needed: int,
    host_tree: bool,
    is_protected: Callable[[str], bool],
    would_be_missing: Callable[[str, int], bool],
    unsupported: Callable[[Any], None],
    qualname_of: Callable[[Any], str],
    judge_text: JudgeText,
    busy_functions: Busy | None,
    getframe: Callable[[int], Any] | None,
) -> dict[str, Handler]:
    """The handlers of SQLite's events, by name (see the module docstring). ``codes``:
    ``files.py``'s ``(NONE, RO, RW, IGNORED)``; ``busy_functions``: ``(enter, leave)`` of the
    guard's own operations, ``getframe``: ``sys._getframe`` (both ``None``: the hidden wrapper's
    frame cannot be read, every connection is refused)."""

    from _thread import get_ident

    refuse = reporter.refuse
    permission = PERMISSION
    type_ = kit_type
    str_ = str
    id_ = id
    judge_database = make_database_judge(
        tools,
        unsupported,
        judge_text,
        make_wal_mode(busy_functions),
        make_wal_files_judge(reporter, access, codes[2], is_protected, judge_text),
        make_cannot_open_missing(
            tools=tools,
            access=access,
            codes=codes,
            parent_needed=parent_needed,
            recording=reporter.recording,
            host_tree=host_tree,
            kit_type=kit_type,
            would_be_missing=would_be_missing,
        ),
    )
    pending: dict[int, tuple[int, BaseException]] = {}  # thread -> (connection id, refusal)
    c_method, make_authorizer = make_authorizers(kit_type, pending)
    connect_call = make_connect_call(busy_functions, getframe)
    connect_uri = make_connect_uri(kit_type, connect_call)

    def made_by_connect() -> bool:
        """Whether ``sqlite3.connect/handle`` comes from the hidden wrapper (``connect_call``)."""

        return connect_call() is not None

    def on_sqlite(args: tuple[Any, ...]) -> None:
        judge_database(args[0] if args else None, connect_uri())

    def on_sqlite_handle(args: tuple[Any, ...]) -> None:
        # Raised inside the C __init__, before the connection can be used (or given an
        # authorizer): the wrapper sets the authorizer as soon as connect returns.
        if made_by_connect():
            return
        connection = args[0] if args else None
        name = qualname_of(type_(connection))
        refuse(
            "file",
            "<sqlite3 connection of class " + name + ">",
            None,
            None,
            None,
            "sqlite",
            f"A sqlite3 connection of class '{name}' made other than by sqlite3.connect "
            "DENIED: python-sb checks the files of ATTACH DATABASE and VACUUM INTO with an "
            "authorizer it sets on the connections sqlite3.connect makes; use sqlite3.connect "
            "(a factory class may not define __init__): the C __init__ marks the connection "
            "usable only after its last audit event, so no authorizer can be set on one made "
            "otherwise before the program's code uses it",
            permission,
        )

    def on_sqlite_authorizer(args: tuple[Any, ...]) -> None:
        connection, callback = args[0], args[1]
        method = c_method(type_(connection), "set_authorizer")
        if method is not None:
            method(connection, make_authorizer(connection, callback))

    def on_sqlite_attach(args: tuple[Any, ...]) -> None:
        name = args[0] if args else None
        if type_(name) is str_:
            judge_database(name)
            return
        refuse(
            "file",
            "<computed file name>",
            None,
            None,
            None,
            "write",
            "ATTACH DATABASE with a file name computed at run time DENIED: the Python layer "
            "judges the file before SQLite evaluates the name; write the name as a literal",
            permission,
        )

    def on_sqlite_refused(args: tuple[Any, ...]) -> None:
        found = pending.pop(get_ident(), None)
        if found is not None and args and found[0] == id_(args[0]):
            raise found[1]

    return {
        "sqlite3.connect": on_sqlite,
        "sqlite3.connect/handle": on_sqlite_handle,
        "pysandboxes.sqlite.authorizer": on_sqlite_authorizer,
        "pysandboxes.sqlite.attach": on_sqlite_attach,
        "pysandboxes.sqlite.refused": on_sqlite_refused,
    }
