"""C functions of the standard library that open files themselves, with no audit event.

``pwd``, ``grp`` and ``spwd`` read ``/etc/passwd``, ``/etc/group`` and ``/etc/shadow``
through libc; ``readline`` reads and writes its history and init files through libreadline;
``ssl``'s ``load_cert_chain``/``load_verify_locations`` have OpenSSL read theirs; SQLite's
``ATTACH``/``VACUUM INTO`` are handled through ``_sqlite3.connect`` (``guard/sqlite.py``).
Each wrapped function raises the ``open`` event of the file it will use (read or write flags)
before running, so that the file rules decide as for ``open()`` -- the refusal is the same
``RulePermissionError``, naming the rule that is missing.

Two lookups need no rule: ``pwd.getpwuid(os.getuid())`` (the process's own entry:
``os.path.expanduser('~')`` without ``HOME`` and ``getpass.getuser()`` without ``LOGNAME``/
``USER`` ask for it, and python-sb filters the environment) and ``grp.getgrgid`` of one of the
process's own group ids.

These modules are usually imported after the guard is armed: the wrappers are put in place of
the module's functions when the module is *created* -- ``_imp.create_dynamic`` and
``_imp.create_builtin`` are wrapped, and every module they return under one of these names is
wrapped before anyone sees it (a fresh copy after ``del sys.modules['pwd']`` included). The
name decides: an extension's init function is found by the last component of its name.

Nothing here is looked up in a module's globals at run time (the program can rewrite them):
what the wrappers use is captured in closures when the guard is armed.
"""

from __future__ import annotations

import os
import sys
from _frozen_importlib import ModuleSpec as _FROZEN_SPEC  # always loaded: the import system

from pysandboxes.guard.kit import Kit, bad_request, valid_request

_NAMESPACE = type(sys.implementation)  # types.SimpleNamespace, without importing types

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Mapping
    from typing import Any

    Before = Callable[[tuple[Any, ...], dict[str, Any]], tuple[tuple[Any, ...], dict[str, Any]]]
    Call = Callable[[tuple[Any, ...], dict[str, Any]], Any]

_READ = os.O_RDONLY
_WRITE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
_APPEND = os.O_WRONLY | os.O_APPEND

PASSWD, GROUP, SHADOW = "/etc/passwd", "/etc/group", "/etc/shadow"

mapping_proxy: Any = type(type.__dict__)  # types.MappingProxyType, without importing types

#: The functions that make a new interpreter, which has no audit hook of the program's (hooks
#: added by ``sys.addaudithook`` belong to one interpreter): judged as ``process-exec`` before the
#: C code runs. CPython raises ``cpython.PyInterpreterState_New`` for ``_xxsubinterpreters``
#: (3.11, 3.12) but none for ``_interpreters.create`` (3.13, which makes it with no thread state)
#: nor the test modules' helpers; 3.12 crashes when that event is refused. Each is wrapped where
#: the running CPython has it.
SUBINTERPRETERS: dict[str, tuple[str, ...]] = {
    "_interpreters": ("create",),
    "_xxsubinterpreters": ("create",),
    "_testcapi": ("run_in_subinterp", "run_in_subinterp_with_config"),
    "_testinternalcapi": ("create_interpreter", "run_in_subinterp_with_config"),
}

#: module -> functions wrapped (documented in docs/python-layer.md).
WRAPPED: dict[str, tuple[str, ...]] = {
    "pwd": ("getpwuid", "getpwnam", "getpwall"),
    "grp": ("getgrgid", "getgrnam", "getgrall"),
    "spwd": ("getspnam", "getspall"),
    "readline": (
        "read_history_file",
        "write_history_file",
        "append_history_file",
        "read_init_file",
        "parse_and_bind",
    ),
    "_sqlite3": ("connect",),  # the guarded factory (guard/sqlite.py)
    "_ssl": ("_test_decode_cert",),  # reads a PEM file and returns the certificate
    "_posixshmem": ("shm_open", "shm_unlink"),  # /dev/shm/NAME
    "_tkinter": ("create",),  # a Tcl interpreter whose file/process commands are hidden
    "_multiprocessing": ("sem_unlink",),  # /dev/shm/sem.NAME (SemLock: _semaphore_guard)
    "posix": ("getgrouplist", "getlogin"),  # /etc/group, the utmp file
    **{module: functions for module, functions in SUBINTERPRETERS.items()},
}

#: Named semaphores created by this process (SemLock): sem_unlink and SemLock._rebuild of one
#: of them need no rule (multiprocessing's own); of any other, they touch another program's.
SEMAPHORE_DIR = "/dev/shm/sem."
UTMP = "/var/run/utmp"


def as_given(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The ``before`` of a hidden call that judges nothing itself (its arguments are exact
    already, or its judgment is inside the hidden function). A module function: no closure."""

    return args, kwargs


def exact_field(
    values: dict[Any, Any],
    key: str,
    _items: Callable[[dict[Any, Any]], Any] = dict.items,
    _type: Callable[[object], Any] = type,
    _str: type = str,
) -> Any:
    """``values[key]`` for a dict the program filled (a spec's instance dict), or ``None``:
    found by iterating it in C and comparing exact ``str`` keys only. ``values.get(key)``
    would call the ``__eq__`` of a ``str`` subclass key with the same hash -- the program's
    code, inside a hidden call's ``before`` while the original is still at hand
    (``attacks/r5_files_create_dynamic_spec_key_eq.py``). Positional defaults: it runs after
    arming and this module is in ``sys.modules``; callers pass ``values`` and ``key``."""

    for name, value in _items(values):
        if _type(name) is _str and name == key:
            return value
    return None


def _no_after(result: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The ``after`` of a hidden call that has none: the result as it is. A module function
    holding nothing (the hidden generator calls an ``after`` unconditionally, taken off its
    list while the original runs)."""

    return result


def hide_reentrant(
    fn: Callable[..., Any],
    kit: Kit,
    before: Before,
    after: Callable[[Any, tuple[Any, ...], dict[str, Any]], Any] | None = None,
    outside_guard: bool = False,
    marker: Any = None,
    # Bound at import (arm time), never passed. Positional defaults: this function runs after
    # arming too (``hide``), its module is in ``sys.modules``, and a ``__kwdefaults__`` dict
    # could be changed item by item with no audit event, where a tuple cannot change
    # (attacks/r5_disarm_hide_kwdefaults_in_place.py).
    _base: type[BaseException] = BaseException,
    _valid: Callable[[Any], bool] = valid_request,
    _bad: Callable[[], BaseException] = bad_request,
    _drop_traceback: Callable[[BaseException, None], BaseException] = (
        BaseException.with_traceback
    ),
    _no_after: Callable[..., Any] = _no_after,
) -> Call:
    """As :func:`pysandboxes.guard.wrappers.hide`, for a function that may run again before it
    returns (``_imp.create_dynamic``: an extension's initialisation imports another one).

    Every call gets its own one-shot generator, made by a factory generator: ``fn`` lives in
    the factory's frame (suspended, reachable through ``gi_frame`` only: refused). The one-shot
    generator gets it in a list it empties just before the call, so that no frame on the stack
    while ``fn`` runs holds it. ``outside_guard``: the generators' globals are not the guard's,
    so that their frames are not guard frames -- ``fn`` may run Python code that calls
    ``sys._getframe`` (``_decimal``'s initialisation imports ``collections``), which the hook
    refuses when a guard frame is among the callers; that code can then walk to these frames
    (``attacks/files_create_dynamic_frame_original.py``), which name neither ``fn`` nor
    ``before``/``after`` then: the one-shot generator gets all three in its list and pops each
    just before its use (``after`` waits on the value stack while ``fn`` runs), so that their
    closures -- the modules wrapped later, the C environment's copy -- stay out of reach too
    (``attacks/r5_disarm_create_dynamic_after_closure.py``). ``marker``: a harmless object the
    one-shot generator's frame names, by which the hook recognises that frame
    (``sqlite_handlers.py``'s ``connect_call``: the code object of the SQLite ``before``).
    """

    base = _base
    valid, bad = _valid, _bad
    drop_traceback = _drop_traceback
    if after is None:
        after = _no_after

    def one(box: list[Any], marker: Any) -> Generator[Any, Any, None]:
        # box: [fn, after, before], each popped just before its use: while fn runs, this frame
        # names none of them (after is on the value stack only), so program code that fn runs
        # and that walks here finds neither the original nor the closures of before/after.
        # ``marker``: what sqlite_handlers' connect_call looks for (a code object only).
        try:
            request: Any = yield None
        except base:  # thrown in by the program: this one-shot generator ends unused
            box.clear()
            return
        args: Any = None
        kwargs: Any = None
        result: Any = None
        try:
            if not valid(request):  # no code of the program runs here (box is full)
                box.clear()
                raise bad()
            args, kwargs = box.pop()(request[0], request[1])  # before: runs no program code
            # after, then fn, popped in that order: both on the value stack only.
            result = box.pop()(box.pop()(*args, **kwargs), args, kwargs)
            outcome: Any = (True, result)
        except base as exc:
            box.clear()  # first: nothing below may run with the original still here
            # The C method of BaseException: a refusal class's own attributes can be replaced
            # with no audit event (attacks/r3_process_refusal_class_method.py).
            outcome = (False, drop_traceback(exc, None))
        box.clear()
        request = args = kwargs = result = None
        yield outcome

    if outside_guard:
        one = outside(one)

    def factory() -> Generator[Any, None, None]:
        while True:
            generator = one([fn, after, before], marker)
            generator.send(None)
            yield generator.send
            del generator

    if outside_guard:
        factory = outside(factory)
    make = factory()
    make.send(None)
    make_next = make.send
    lock = kit.allocate_lock()

    def call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        with lock:  # the factory runs briefly, never into fn
            send = make_next(None)
        ok, value = send((args, kwargs))
        if ok:
            return value
        raise value

    return outside(call) if outside_guard else call


def _outside_scope() -> dict[str, Any]:
    import builtins

    return {"__builtins__": builtins.__dict__}


#: The globals of every function :func:`outside` rebuilds (one dict: ``guard/signals.py`` knows
#: its frames by it, captured when the guard is armed).
OUTSIDE_SCOPE = _outside_scope()


def outside(function: Callable[..., Any], _scope: dict[str, Any] = OUTSIDE_SCOPE) -> Any:
    """``function`` rebuilt with globals that are no guard module's: its frames are not guard
    frames (see :func:`hide_reentrant`). Its code reads no global name."""

    function_type: Any = type(function)
    return function_type(
        function.__code__, _scope, function.__name__, function.__defaults__, function.__closure__
    )


def _user_database() -> tuple[Callable[..., Any], ...]:
    """``getuid, getgid, getegid, getgroups, getpwuid, getpwnam``: the C functions (``pwd``'s
    are wrapped later, judged here). Windows has no user or password database of this kind
    (and no ``pwd``/``grp`` module whose calls would need judging): there every one of them
    raises ``OSError``, which only the ``pwd``/``grp``/``readline`` wrappers could reach, and
    those modules do not exist there."""

    if sys.platform == "win32":
        os_error = OSError  # captured: no global read after arming

        def missing(*_args: Any) -> Any:
            raise os_error("no user database on this platform")

        return (missing,) * 6
    import pwd

    return os.getuid, os.getgid, os.getegid, os.getgroups, pwd.getpwuid, pwd.getpwnam


def _befores(
    kit: Kit, c_env: Mapping[str, str], semaphores: set[str]
) -> dict[tuple[str, str], Before]:
    """``(module, function) -> before``: raise the ``open`` event of the file used."""

    from pysandboxes.guard.wrappers import exact_text

    audit = kit.audit
    index = int.__index__
    int_ = int
    getuid, getgid, getegid, getgroups, own_home_entry, getpwnam = _user_database()
    # Nothing here may run code of the program (it runs inside hidden generators, whose
    # frames hold the originals): no os.environ (a Python mapping whose methods can be
    # replaced), no os.path; a plain dict that follows the C environment, posix and pwd.
    environ = c_env
    stat = kit.stat
    os_error, value_error_, key_error = OSError, ValueError, KeyError

    def exists(path: str) -> bool:
        try:
            stat(path)
        except (os_error, value_error_):
            return False
        return True

    def home() -> str:
        value = environ.get("HOME")
        if value:
            return value
        return str_exact(own_home_entry(getuid()).pw_dir)

    def expanduser(path: str) -> str:
        """``~`` and ``~/...`` as libreadline's tilde expansion (``HOME``, then the password
        database); ``~user`` is looked up in the password database: a read of /etc/passwd."""

        if path == "~" or path.startswith("~/"):
            return home().rstrip("/") + path[1:] if path != "~" else home()
        audit("open", passwd, "r", read_flags)
        name, _, rest = path[1:].partition("/")
        try:
            entry = getpwnam(name)
        except key_error:
            return path
        return str_exact(entry.pw_dir).rstrip("/") + ("/" + rest if rest else "")

    type_ = kit.type
    len_ = kit.len
    str_, bytes_ = str, bytes
    # Every name used at run time is local: a module global could be replaced by the program.
    read_flags = _READ
    passwd, group, shadow = PASSWD, GROUP, SHADOW
    write_flags, append_flags = _WRITE, _APPEND
    not_found = FileNotFoundError
    type_error = TypeError

    def opens(path: str) -> Before:
        def before(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            audit("open", path, "r", read_flags)
            return args, kwargs

        return before

    def own_uid(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if len_(args) != 1 or kwargs:
            return args, kwargs  # the original's own TypeError
        uid = args[0]
        if type_(uid) is not int_:
            uid = index(uid)  # an int subclass answers once; anything else: TypeError
        if uid != getuid():
            audit("open", passwd, "r", read_flags)
        return (uid,), {}

    def own_gid(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if len_(args) != 1 or kwargs:
            return args, kwargs
        gid = args[0]
        if type_(gid) is not int_:
            gid = index(gid)
        if gid != getgid() and gid != getegid() and gid not in getgroups():
            audit("open", group, "r", read_flags)
        return (gid,), {}

    def history_default() -> str:
        home = environ.get("HOME")
        if not home:
            # libreadline finds no default history file without HOME, and reads nothing.
            raise not_found(2, "No such file or directory (HOME is not set)")
        return home + "/.history"

    def init_default() -> str:
        given = environ.get("INPUTRC")
        if given:
            return given
        mine = home().rstrip("/") + "/.inputrc"  # libreadline's tilde expansion
        return mine if exists(mine) else "/etc/inputrc"

    open_ = open  # io.open, captured at arm time
    value_error, os_error = ValueError, OSError
    fs_encoding = kit.fs_encoding
    str_exact = kit.str_exact

    def include_target(line: str) -> str | None:
        """The file of a ``$include`` directive, as libreadline's ``rl_parse_and_bind`` and
        ``handle_parser_directive`` find it (spaces and tabs only; directive names ignore
        case; the argument runs to the end of the line; ``~`` expanded), else None."""

        text = line.lstrip(" \t")
        if not text.startswith("$"):
            return None
        text = text[1:].lstrip(" \t")
        end = 0
        while end < len_(text) and text[end] not in " \t":
            end += 1
        if text[:end].lower() != "include":
            return None
        target = text[end:].lstrip(" \t").split("\n", 1)[0]
        if not target:
            return None
        return expanduser(target) if target.startswith("~") else target

    def judge_init(path: Any, depth: int = 0) -> None:
        """An init file is read, and so is every file its ``$include`` lines name: judged
        here, each one read once by the guard to find them (libreadline reads them itself)."""

        # libreadline runs its tilde expansion on the name (``~`` at the start of a word, a
        # space before it too): a leading one is expanded here as it does; any other ``~``
        # is refused rather than guessed at (review r3: "/tmp/dd ~" read $HOME-relative).
        tilde = "~" if type_(path) is str_ else b"~"
        if type_(path) is str_ and path.startswith("~"):
            path = expanduser(path)
        if tilde in path:
            raise value_error(
                "python-sb: a readline init file name holding '~' is refused (libreadline "
                "expands it): pass os.path.expanduser(name)"
            )
        audit("open", path, "r", read_flags)
        if depth > 16:  # libreadline has no limit, but a deeper chain is no init file
            raise value_error("readline init files: $include nested too deeply")
        try:
            with open_(path, "rb") as handle:
                data = handle.read()
        except os_error:
            return  # libreadline fails to read it too
        for raw in data.split(b"\n"):
            target = include_target(raw.decode(fs_encoding, "surrogateescape"))
            if target is not None:
                judge_init(target, depth + 1)

    # libreadline and OpenSSL read the C environment when they start: c_env follows it
    # (os.putenv, os.unsetenv and os.environ, which calls them).
    launch_home = c_env.get("HOME")  # what the launcher gave the program (or nothing)
    openssl_names = ("OPENSSL_CONF", "OPENSSL_MODULES", "OPENSSL_ENGINES")
    launch_openssl = tuple(c_env.get(name) for name in openssl_names)
    zip_ = zip  # captured: the module's namespace is reachable

    def openssl_init() -> None:
        """OpenSSL reads ``$OPENSSL_CONF`` when it is first initialised (``_hashlib`` or
        ``_ssl`` created), and a configuration can load engines and providers (shared
        objects, from ``$OPENSSL_MODULES``/``$OPENSSL_ENGINES`` or any path): when the program
        changed one of these variables since the launch, that is native code
        (``python-api=ALLOW:openssl.config``) and the configuration a read."""

        changed = False
        for name, launched in zip_(openssl_names, launch_openssl, strict=True):
            if c_env.get(name) != launched:
                changed = True
        if not changed:
            return
        audit("pysandboxes.call", "openssl.config")
        conf = c_env.get("OPENSSL_CONF")
        if conf:
            audit("open", conf, "r", read_flags)

    def shm_path(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if args:
            name = str_exact(args[0])  # an exact str, used as judged
            args = (name, *args[1:])
        else:
            name = str_exact(kwargs.get("path"))  # type: ignore[arg-type]
            kwargs = {**kwargs, "path": name}
        if "\x00" in name:
            # _posixshmem passes the UTF-8 bytes to shm_open, which stops at the NUL: the name
            # judged would not be the name used ("x\0/../../project/f" creates /dev/shm/x).
            raise value_error("embedded null character")
        return "/dev/shm/" + name.lstrip("/"), args, kwargs

    def shm_open(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        path, args, kwargs = shm_path(args, kwargs)
        flags = args[1] if len_(args) > 1 else kwargs.get("flags", 0)
        flags = index(flags)  # read once
        if len_(args) > 1:
            args = (args[0], flags, *args[2:])
        else:
            kwargs = {**kwargs, "flags": flags}
        audit("open", path, None, flags)
        return args, kwargs

    def shm_unlink(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        path, args, kwargs = shm_path(args, kwargs)
        audit("os.remove", path, -1)
        return args, kwargs

    def path_read(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if kwargs or len_(args) != 1:
            return args, kwargs  # the original's own TypeError
        path = exact_text(kit, args[0])
        if type_(path) is not str_ and type_(path) is not bytes_:
            raise type_error(f"expected str, bytes or os.PathLike object, not {type_(path)}")
        audit("open", path, "r", read_flags)
        return (path,), {}

    semaphore_dir, utmp = SEMAPHORE_DIR, UTMP

    def sem_unlink(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if kwargs or len_(args) != 1:
            return args, kwargs  # the original's own TypeError
        name = str_exact(args[0])  # an exact str, used as judged (TypeError otherwise)
        if "\x00" in name:
            raise value_error("embedded null character")
        if name not in semaphores:
            audit("os.remove", semaphore_dir + name.lstrip("/"), -1)
        return (name,), {}

    def readline_init() -> None:
        """libreadline reads an init file when ``readline`` is initialised: ``$INPUTRC``, else
        ``$HOME/.inputrc``. Judged (with its ``$include`` files) when the program chose it:
        ``INPUTRC`` set, or ``HOME`` changed since the launch; the user's own ``~/.inputrc``
        of an unchanged environment is not judged."""

        given = c_env.get("INPUTRC")
        if given:
            judge_init(given)
            return
        home = c_env.get("HOME")
        if home and home != launch_home and exists(home + "/.inputrc"):
            judge_init(home + "/.inputrc")

    def parse_and_bind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if kwargs or len_(args) != 1:
            return args, kwargs  # the original's own TypeError
        try:
            line = str_exact(args[0])  # judged and used: one exact str
        except type_error:
            return args, kwargs
        target = include_target(line)
        if target is not None:
            judge_init(target)
        return (line,), {}

    def readline_file(
        position: int, flags: int, default: Callable[[], str], init: bool = False
    ) -> Before:
        """The file argument (positional only, at ``position``) made an exact str/bytes once
        (the object judged is the object used); ``None`` becomes libreadline's default, passed
        explicitly so that libreadline looks nothing up itself."""

        def before(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            if kwargs or not position <= len_(args) <= position + 1:
                return args, kwargs  # the original's own TypeError, before any file
            path = args[position] if len_(args) > position else None
            path = default() if path is None else exact_text(kit, path)
            if type_(path) is not str_ and type_(path) is not bytes_:
                raise type_error(f"expected str, bytes or os.PathLike object, not {type_(path)}")
            if init:
                judge_init(path)  # and the files its $include lines name
            else:
                audit("open", path, "r" if flags == read_flags else "w", flags)
            return (*args[:position], path), {}

        return before

    def announces(function: str) -> Before:
        def before(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            audit("pysandboxes.call", function)
            return args, kwargs

        return before

    new_interpreters = {
        (module, name): announces(f"{module}.{name}")
        for module, names in SUBINTERPRETERS.items()
        for name in names
    }
    return {
        **new_interpreters,
        ("pwd", "getpwuid"): own_uid,
        ("pwd", "getpwnam"): opens(passwd),
        ("pwd", "getpwall"): opens(passwd),
        ("grp", "getgrgid"): own_gid,
        ("grp", "getgrnam"): opens(group),
        ("grp", "getgrall"): opens(group),
        ("spwd", "getspnam"): opens(shadow),
        ("spwd", "getspall"): opens(shadow),
        ("readline", "read_history_file"): readline_file(0, read_flags, history_default),
        ("readline", "write_history_file"): readline_file(0, write_flags, history_default),
        ("readline", "append_history_file"): readline_file(1, append_flags, history_default),
        ("readline", "read_init_file"): readline_file(0, read_flags, init_default, True),
        ("readline", "parse_and_bind"): parse_and_bind,
        ("readline", "<init>"): readline_init,  # type: ignore[dict-item]  # not a Before
        ("_ssl", "<init>"): openssl_init,  # type: ignore[dict-item]
        ("_ssl", "_test_decode_cert"): path_read,
        ("_posixshmem", "shm_open"): shm_open,
        ("_posixshmem", "shm_unlink"): shm_unlink,
        ("_multiprocessing", "sem_unlink"): sem_unlink,
        ("posix", "getgrouplist"): opens(group),
        ("posix", "getlogin"): opens(utmp),
    }


def install(
    kit: Kit,
    replacements: dict[int, Any],
    hide: Callable[..., Call],
    named: Callable[[Callable[..., Any], Any], Callable[..., Any]],
    wrapper: Callable[[Call], Callable[..., Any]],
) -> Callable[[Any], Any]:
    """Wrap the functions of these modules already loaded (their aliases through
    ``replacements``) and wrap ``_imp.create_dynamic``; return ``wrap_module`` for the
    ``_imp.create_builtin`` wrapper (``pwd`` is a built-in module)."""

    import _imp

    from pysandboxes.guard import sqlite

    # The C environment's copy is changed by the hidden putenv/unsetenv afters alone; what
    # judges reads it through a read-only view (ssl.SSLContext.set_default_verify_paths, a
    # closure the program reaches, held the dict itself: rewritten, it hid a changed
    # OPENSSL_CONF or INPUTRC from the checks made when OpenSSL or readline start).
    c_env = mapping_proxy(_track_environment(kit, hide, named, wrapper, replacements))
    semaphores: set[str] = set()  # names of the semaphores this process created
    befores = _befores(kit, c_env, semaphores)
    sqlite_wrappers = sqlite.build(kit)
    connect_marker = sqlite.connect_before_code()
    from pysandboxes.guard import tcl

    tcl_after = tcl.build(kit)

    builtin_function = type(len)
    type_ = kit.type
    str_ = str
    id_ = id
    # A private copy: WRAPPED, a module global, could be changed by the program.
    wrapped = {module: tuple(functions) for module, functions in WRAPPED.items()}
    given = as_given  # captured: wrap_module runs after arming, this namespace is reachable
    field = exact_field
    module_type: Any = type(sys)
    module_dict = module_type.__dict__["__dict__"].__get__

    def wrap_module(module: Any, aliases: dict[int, Any] | None = None) -> Any:
        # Read through the module type's own descriptor and an exact-key scan of its dict:
        # neither a subclass's property nor a key of the program's runs here.
        if type_(module) is not module_type:
            return module
        namespace: Any = module_dict(module)
        name: Any = field(namespace, "__name__")
        if type_(name) is not str_:
            return module
        short = str_.rpartition(name, ".")[2]  # PyInit_<last component>: the name decides
        functions = wrapped.get(short)
        if functions is None:
            return module
        for attr in functions:
            original = field(namespace, attr)  # its keys may be the program's by now
            if type_(original) is not builtin_function:
                continue  # absent, or wrapped already
            after = None
            marker = None
            if short == "_sqlite3":
                before, after = sqlite_wrappers(module)
                marker = connect_marker
            elif short == "_tkinter":
                before, after = given, tcl_after
            else:
                before = befores[(short, attr)]
            call = hide(original, kit, before, after, marker)
            made = named(wrapper(call), original)
            namespace[attr] = made
            if aliases is not None:  # loaded before arming: its aliases elsewhere too
                aliases[id_(original)] = (original, made)
        return module

    for name in WRAPPED:
        module = sys.modules.get(name)
        if module is not None:
            wrap_module(module, replacements)

    # id -> module, for the modules the hidden create_dynamic made and exec_dynamic has not
    # executed yet: exec_dynamic's after acts on those alone. Any other object the program
    # passes to exec_dynamic (which ignores it) would otherwise be read here -- a __getattr__
    # or a metaclass of the program's running in the after, whose frame names the guards.
    created: dict[int, Any] = {}

    def after_create(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        module = wrap_module(module)
        created[id_(module)] = module
        return module

    original = _imp.create_dynamic
    on_create: dict[str, Any] = {
        "readline": befores[("readline", "<init>")],
        "_ssl": befores[("_ssl", "<init>")],
        "_hashlib": befores[("_ssl", "<init>")],
    }
    call = hide_reentrant(
        original, kit, _fresh_spec(kit, on_create), after_create, outside_guard=True
    )
    exposed = outside(foreign_spec(outside(wrapper(call))))
    replacements[id(original)] = (original, named(exposed, original))

    # _ssl's types exist only once its module is executed (multi-phase initialisation).
    guard_ssl = _ssl_guard(kit, c_env)
    guard_semaphores = _semaphore_guard(kit, semaphores, hide)

    def after_exec(result: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        module = args[0] if args else None
        if created.pop(id_(module), None) is module and module is not None:
            guard_ssl(module)
            guard_semaphores(module)
        return result

    original_exec = _imp.exec_dynamic
    call = hide_reentrant(original_exec, kit, as_given, after_exec, outside_guard=True)
    replacements[id(original_exec)] = (original_exec, named(outside(wrapper(call)), original_exec))
    loaded_semaphores = sys.modules.get("_multiprocessing")
    if loaded_semaphores is not None:
        guard_semaphores(loaded_semaphores)
    loaded_ssl = sys.modules.get("_ssl")
    if loaded_ssl is not None:
        c_base = loaded_ssl.__dict__.get("_SSLContext")
        guard_ssl(loaded_ssl)
        context = getattr(sys.modules.get("ssl"), "SSLContext", None)
        if isinstance(context, type) and isinstance(c_base, type) and issubclass(context, c_base):
            # ssl loaded before arming: its SSLContext (a Python class) gets the methods
            for attr, function in guard_ssl.methods(c_base).items():  # type: ignore[attr-defined]
                setattr(context, attr, function)
    return wrap_module


def _semaphore_guard(
    kit: Kit, semaphores: set[str], hide: Callable[..., Call]
) -> Callable[[Any], None]:
    """``_multiprocessing.SemLock`` creates (``sem_open``) or opens (``_rebuild``) the named
    semaphore ``/dev/shm/sem.NAME`` in C with no audit event. Creation uses ``O_EXCL``: it
    cannot touch an existing semaphore, so it needs no rule; the name is recorded, and
    ``SemLock._rebuild`` (opening by name, read-write) or ``sem_unlink`` of a name this process
    did not create is judged as a write or a removal of that file -- another program's
    semaphore. ``_multiprocessing.SemLock`` is replaced in the module by a subclass when the
    module is executed; the C type reached through an instance (``type(lock._semlock)``) or
    the subclass's ``__mro__`` stays unjudged (as ``_ssl._SSLContext``'s methods).

    The set of names decides the hidden ``sem_unlink``: the subclass's methods, which the
    program reaches (closures read and written with no audit event), hold no way to it. The
    creation and its record are one hidden call (a program calling it creates a semaphore, and
    owns it); ``_rebuild`` asks another whether a name is recorded
    (``attacks/r5_files_semaphore_owner_set.py``)."""

    audit = kit.audit
    type_ = kit.type
    str_exact = kit.str_exact
    len_ = kit.len
    str_, bool_, int_ = str, bool, int
    type_error, value_error = TypeError, ValueError
    semaphore_dir = SEMAPHORE_DIR
    rw_flags = os.O_RDWR
    is_type = type.__dict__["__mro__"].__get__
    index = int.__index__  # C: the value of an int (subclass), no program code
    class_method = classmethod  # captured: guard runs after arming (a module executed later)
    field = exact_field
    module_type: Any = type(sys)
    module_dict = module_type.__dict__["__dict__"].__get__
    flags_of = type.__dict__["__flags__"].__get__
    immutable = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: a C type, never a class made in Python
    record, recorded = semaphores.add, semaphores.__contains__

    def exact_name(name: Any) -> Any:
        if name is None:
            return None
        name = str_exact(name)  # TypeError for anything but a str
        if "\x00" in name:
            raise value_error("embedded null character")
        return name

    def exact_creation(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # Everything exact before the C constructor parses it: no __index__ of the program's
        # runs in the hidden call.
        if kwargs or len_(args) != 6:
            raise type_error("SemLock() takes kind, value, maxvalue, name and unlink")
        cls, kind, value, maxvalue, name, unlink = args
        is_type(cls)  # TypeError for what is not a class
        if type_(unlink) is not bool_ and type_(unlink) is not int_:
            raise type_error("SemLock(): unlink must be a bool")
        return (cls, index(kind), index(value), index(maxvalue), exact_name(name), unlink), {}

    def remember(made: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if args[4] is not None:
            record(args[4])
        return made

    def exact_one_name(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if kwargs or len_(args) != 1:
            raise type_error("one semaphore name")
        return (exact_name(args[0]),), {}

    is_recorded = hide(recorded, kit, exact_one_name)

    def guard(module: Any) -> None:
        if type_(module) is not module_type:
            return
        namespace: Any = module_dict(module)
        name: Any = field(namespace, "__name__")  # no key's __eq__ runs (exact_field)
        if type_(name) is not str_ or str_.rpartition(name, ".")[2] != "_multiprocessing":
            return
        base = field(namespace, "SemLock")  # no key's __eq__ runs (exact_field)
        try:
            is_type(base)
        except type_error:
            return  # not a class
        if not flags_of(base) & immutable:
            return  # guarded already (a class made in Python), or not the C type
        create = hide(base.__new__, kit, exact_creation, remember)
        base_rebuild = base._rebuild

        def __new__(cls: Any, kind: Any, value: Any, maxvalue: Any, name: Any, unlink: Any) -> Any:
            return create((cls, kind, value, maxvalue, name, unlink), {})

        def _rebuild(cls: Any, handle: Any, kind: Any, maxvalue: Any, name: Any) -> Any:
            name = exact_name(name)
            if name is not None and not is_recorded((name,), {}):
                audit("open", semaphore_dir + name.lstrip("/"), None, rw_flags)
            return base_rebuild(handle, kind, maxvalue, name)

        guarded = type_(base)(
            "SemLock",
            (base,),
            {
                "__new__": __new__,
                "_rebuild": class_method(_rebuild),
                "_pysandboxes_base": base,
                "__doc__": base.__doc__,
            },
        )
        guarded.__module__ = base.__module__
        guarded.__qualname__ = base.__qualname__
        namespace["SemLock"] = guarded

    return guard


def _ssl_guard(kit: Kit, c_env: Mapping[str, str]) -> Callable[[Any], Any]:
    """``_ssl._SSLContext.load_cert_chain`` and ``load_verify_locations`` make OpenSSL read
    files with no audit event (``load_dh_params`` raises ``open``): ``_ssl._SSLContext`` is
    replaced in the ``_ssl`` module by a subclass whose two methods raise the ``open`` event of
    each file (read) first; ``ssl.SSLContext``, defined on it, inherits them. The C base type's
    methods called directly stay unjudged (``attacks/files_ssl_base_load_verify.py``).

    ``guard(module)`` puts the subclass in place; ``guard.methods(module)`` (arm time only)
    gives the two methods, for an ``ssl`` module loaded before arming."""

    from pysandboxes.guard.wrappers import exact_path

    audit = kit.audit
    type_ = kit.type
    str_, bytes_ = str, bytes
    type_error = TypeError
    read_flags = _READ
    field = exact_field
    module_type: Any = type(sys)
    module_dict = module_type.__dict__["__dict__"].__get__
    flags_of = type.__dict__["__flags__"].__get__
    immutable = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: a C type, never a class made in Python
    is_type = type.__dict__["__mro__"].__get__

    environ = c_env  # OpenSSL reads the C environment
    cert_names = ("SSL_CERT_FILE", "SSL_CERT_DIR")
    launch_certs = tuple(environ.get(name) for name in cert_names)
    zip_ = zip  # captured: the module's namespace is reachable

    def methods(base: Any) -> dict[str, Any]:
        chain = base.load_cert_chain
        verify = base.load_verify_locations
        default_paths = base.set_default_verify_paths

        def set_default_verify_paths(self: Any) -> Any:
            # OpenSSL reads $SSL_CERT_FILE / $SSL_CERT_DIR: judged when the program set them.
            for name, launched in zip_(cert_names, launch_certs, strict=True):
                value = environ.get(name)
                if value and value != launched:
                    audit("open", value, "r", read_flags)
            return default_paths(self)

        def read(path: Any) -> Any:
            if path is None:
                return None
            path = exact_path(path)  # public builtins only: this closure holds no Kit
            if type_(path) is not str_ and type_(path) is not bytes_:
                raise type_error(f"path should be a str, bytes or os.PathLike, not {type_(path)}")
            audit("open", path, "r", read_flags)
            return path

        def load_cert_chain(
            self: Any, certfile: Any, keyfile: Any = None, password: Any = None
        ) -> Any:
            return chain(self, read(certfile), read(keyfile), password)

        def load_verify_locations(
            self: Any, cafile: Any = None, capath: Any = None, cadata: Any = None
        ) -> Any:
            return verify(self, read(cafile), read(capath), cadata)

        load_cert_chain.__doc__ = chain.__doc__
        load_verify_locations.__doc__ = verify.__doc__
        set_default_verify_paths.__doc__ = default_paths.__doc__
        return {
            "load_cert_chain": load_cert_chain,
            "load_verify_locations": load_verify_locations,
            "set_default_verify_paths": set_default_verify_paths,
        }

    def base_of(module: Any) -> Any:
        """``module._SSLContext`` when ``module`` is an ``_ssl`` not guarded yet, else None."""

        if type_(module) is not module_type:
            return None
        namespace: Any = module_dict(module)
        name: Any = field(namespace, "__name__")  # no key's __eq__ runs (exact_field)
        if type_(name) is not str_ or str_.rpartition(name, ".")[2] != "_ssl":
            return None
        base = field(namespace, "_SSLContext")
        try:
            is_type(base)
        except type_error:
            return None  # not a class
        if not flags_of(base) & immutable:
            return None  # guarded already (a class made in Python), or not _ssl's own
        return base

    def guard(module: Any) -> None:
        base = base_of(module)
        if base is None:
            return
        namespace = {**methods(base), "_pysandboxes_base": base}
        guarded = type_(base)("_SSLContext", (base,), namespace)
        guarded.__module__ = base.__module__
        guarded.__qualname__ = base.__qualname__
        module.__dict__["_SSLContext"] = guarded

    guard.methods = methods  # type: ignore[attr-defined]
    return guard


def _track_environment(
    kit: Kit,
    hide: Callable[..., Call],
    named: Callable[[Callable[..., Any], Any], Callable[..., Any]],
    wrapper: Callable[[Call], Callable[..., Any]],
    replacements: dict[int, Any],
) -> dict[str, str]:
    """A copy of the C environment kept up to date: ``posix.putenv``/``unsetenv`` (which
    ``os.environ`` calls too) are wrapped to record what they set, after they succeed. What C
    libraries read at start-up (``INPUTRC``, ``OPENSSL_CONF``...) is decided on it, not on
    ``os.environ``, which ``os.putenv`` alone does not change."""

    from pysandboxes.guard.wrappers import exact_text

    posix = sys.modules[os.name]  # the C module: posix, or nt on Windows
    c_env: dict[str, str] = dict(os.environ)
    len_ = kit.len
    tuple_ = tuple
    type_, str_, bytes_decode = kit.type, str, bytes.decode
    encoding = kit.fs_encoding

    def fsdecode(value: Any) -> str:
        # In C: os.fsdecode is Python code that looks fspath up in the os module's namespace,
        # which the program can rebind -- its code would run in these afters, whose frames
        # name the copy itself (attacks/r5_env_c_environment_copy_via_fsdecode.py). The
        # values are exact str/bytes already (exact_args).
        if type_(value) is str_:
            return value  # type: ignore[no-any-return]
        return bytes_decode(value, encoding, "surrogateescape")

    def exact_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if kwargs:
            return args, kwargs  # the original's own TypeError
        return tuple_([exact_text(kit, arg) for arg in args]), {}

    def after_put(result: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if len_(args) == 2:
            c_env[fsdecode(args[0])] = fsdecode(args[1])
        return result

    def after_unset(result: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if len_(args) == 1:
            c_env.pop(fsdecode(args[0]), None)
        return result

    for name, after in (("putenv", after_put), ("unsetenv", after_unset)):
        original = getattr(posix, name, None)
        if original is not None:
            made = named(wrapper(hide(original, kit, exact_args, after)), original)
            replacements[id(original)] = (original, made)
    return c_env


def foreign_spec(
    exposed: Callable[..., Any],
    _module_spec: type = _FROZEN_SPEC,
    _namespace: type = _NAMESPACE,
    _type: Callable[[object], Any] = type,
    _getattr: Callable[..., Any] = getattr,
) -> Callable[..., Any]:
    """The exposed ``_imp.create_dynamic``/``create_builtin``: a spec of another class than
    the frozen importlib's ``ModuleSpec`` -- a second, source-loaded importlib's, as
    test_importlib's ``Source_*`` tests and tools that vendor importlib use (issue 27, cause
    5) -- is read here, in the program's call (its properties may run its code: this frame
    holds nothing of the guard's), into a ``types.SimpleNamespace`` of its ``name`` and
    ``origin``, all that CPython reads of a spec; the hidden ``before`` then takes that exact
    type only, and its values as exact ``str``. Positional defaults bound at import; the
    function reads no global name (``outside`` rebuilds it)."""

    def create(*args: Any, **kwargs: Any) -> Any:
        if args:
            spec = args[0]
            kind = _type(spec)
            if kind is not _module_spec and kind is not _namespace:
                fresh = _namespace(name=spec.name, origin=_getattr(spec, "origin", None))
                args = (fresh, *args[1:])
        return exposed(*args, **kwargs)

    return create


def _fresh_spec(kit: Kit, on_create: dict[str, Callable[[], None]]) -> Before:
    """``_imp.create_dynamic(spec, file=None)`` gets a fresh spec holding the name and origin
    only, as exact ``str``: a spec whose ``name`` answers twice decides nothing. ``on_create``:
    what to judge before an extension of that (last) name is initialised.

    The fresh spec is a ``types.SimpleNamespace`` (all CPython reads of it are ``name`` and
    ``origin``): a C type whose attributes the program cannot replace, where a ``ModuleSpec``
    runs its class's ``__init__`` -- replaceable with no audit event, so the program's code
    ran in this ``before`` with the original at hand
    (``attacks/r5_files_create_dynamic_spec_class_init.py``) -- and a property the program set
    on that class would have answered CPython another name than the one judged here."""

    from _frozen_importlib import ModuleSpec as module_spec

    str_ = str
    mro_of = type.__dict__["__mro__"].__get__
    type_ = kit.type
    type_error = TypeError
    spec_dict = module_spec.__dict__["__dict__"].__get__
    field = exact_field  # captured: the module global could be rebound
    namespace: Any = type(sys.implementation)  # types.SimpleNamespace, without importing types

    def exact(value: Any) -> Any:
        if value is None:
            return None
        for base in mro_of(type_(value)):
            if base is str_:
                return str_.__str__(value)
        raise type_error("create_dynamic() needs a spec whose name and origin are str")

    namespace_dict = namespace.__dict__["__dict__"].__get__

    def before(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not args or kwargs:
            return args, kwargs  # CPython's own TypeError
        spec = args[0]
        if type_(spec) is module_spec:
            values = spec_dict(spec)  # C: the instance dict, no descriptor of the class
        elif type_(spec) is namespace:  # another importlib's spec, read by foreign_spec
            values = namespace_dict(spec)
        else:  # a subclass's properties would run program code
            raise type_error("create_dynamic() needs a ModuleSpec")
        name = exact(field(values, "name"))  # no key's __eq__ runs (exact_field)
        fresh = namespace(name=name, origin=exact(field(values, "origin")))
        check = on_create.get(str_.rpartition(name, ".")[2]) if name is not None else None
        if check is not None:
            check()
        return (fresh, *args[1:]), {}

    return before
