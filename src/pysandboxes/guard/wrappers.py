"""The few functions python-sb wraps, because CPython raises no audit event for them.

Each wrapper raises a private audit event (``pysandboxes.call``, ``pysandboxes.stat``,
``pysandboxes.filter``, ``pysandboxes.mknod``) and lets the one audit hook decide; it holds no
guard state. :data:`WRAPPERS` is the table documented in ``docs/python-layer.md`` (function,
reason, the test that covers it).

Where a wrapper guards a capability (starting a process or a thread, changing privileges), the
original function must not be reachable from the wrapper: a Python closure can be read through
``__closure__`` without any audit event. :func:`hide` keeps the original only in the frame of a
suspended generator, which is reachable through ``gi_frame`` (audited, refused as
introspection) or ``gc.get_referents`` (audited, refused) alone. The wrapper is also put in
place of every alias of the original found in loaded modules (``os.setuid`` is
``posix.setuid``; ``threading._start_new_thread`` is ``_thread.start_new_thread``).

The ``ignore=`` helpers (``os.stat``/``lstat``/``access``, ``os.listdir``/``scandir``) are
installed only when the policy has ``ignore=`` rules, and only as ``os`` attributes (the import
system keeps calling ``posix`` directly): they hide names, they are not a boundary -- the
content of an ignored file is refused by the ``open`` event whatever function asks for it.
"""

from __future__ import annotations

import os
import sys

from pysandboxes.guard.calls import REGISTRY
from pysandboxes.guard.kit import Kit
from pysandboxes.guard.native_files import (
    SUBINTERPRETERS,
    exact_field,
    foreign_spec,
    hide_reentrant,
)
from pysandboxes.guard.native_files import WRAPPED as NATIVE_WRAPPED

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NamedTuple
else:
    from pysandboxes.record import NamedTuple


class Wrapper(NamedTuple):
    """One row of the wrapper table."""

    target: str  # "module.function"
    reason: str
    test: str  # the test (file::name) that shows it works
    only_with_ignore: bool = False


_PRIV = "tests/redteam/misuse/attacks/privileges_setuid.py"

#: ``os`` functions (``posix`` attributes) that CPython 3.11 runs without an audit event: the
#: registry's own ``wrapped`` entries (``calls.py``), so the two cannot drift apart.
_OS_WRAPPED = tuple(
    entry.function[3:] for entry in REGISTRY if entry.wrapped and entry.function.startswith("os.")
)
WRAPPERS: tuple[Wrapper, ...] = (
    Wrapper(
        "_posixsubprocess.fork_exec",
        "no audit event; subprocess raises one, a direct call does not",
        "tests/redteam/misuse/attacks/process_fork_exec_direct.py",
    ),
    Wrapper(
        "_thread.start_new_thread",
        "no audit event for starting a thread",
        "tests/redteam/misuse/attacks/threads_start.py",
    ),
    Wrapper(
        "_imp.create_builtin",
        "builds a fresh built-in module (an unwrapped posix) without an audit event",
        "tests/redteam/review/attacks/files_fresh_posix_module.py",
    ),
    Wrapper(
        "_thread.start_joinable_thread",
        "what threading uses from Python 3.13",
        "tests/redteam/misuse/attacks/threads_start.py",
    ),
    Wrapper(
        "_thread.start_new",
        "alias of start_new_thread (a separate object)",
        "tests/unit/guard/test_wrappers.py::test_thread_aliases_wrapped",
    ),
    Wrapper("_thread.interrupt_main", "no audit event", "tests/unit/guard/test_wrappers.py"),
    Wrapper("_thread.stack_size", "no audit event", "tests/unit/guard/test_wrappers.py"),
    *(Wrapper("os." + name, "no audit event", _PRIV) for name in _OS_WRAPPED),
    Wrapper(
        "signal.pidfd_send_signal",
        "no audit event (signals another process through a pidfd)",
        "tests/redteam/review/attacks/control_pidfd_send_signal.py",
    ),
    Wrapper("signal.alarm", "no audit event", "tests/unit/guard/test_wrappers.py"),
    Wrapper("signal.setitimer", "no audit event", "tests/unit/guard/test_wrappers.py"),
    Wrapper("faulthandler.enable", "no audit event", "tests/unit/guard/test_wrappers.py"),
    Wrapper(
        "faulthandler.dump_traceback_later", "no audit event", "tests/unit/guard/test_wrappers.py"
    ),
    Wrapper("faulthandler.register", "no audit event", "tests/unit/guard/test_wrappers.py"),
    Wrapper("importlib.reload", "no audit event of its own", "tests/unit/guard/test_wrappers.py"),
    Wrapper(
        "os.mkfifo",
        "creates a file without an audit event",
        "tests/redteam/misuse/attacks/files_mkfifo_outside.py",
    ),
    Wrapper(
        "os.mknod", "creates a file without an audit event", "tests/unit/guard/test_wrappers.py"
    ),
    Wrapper(
        "os.open",
        "the open event does not carry dir_fd: a relative path with dir_fd is "
        "rewritten to /proc/self/fd/N/path",
        "tests/redteam/misuse/attacks/files_dir_fd.py",
    ),
    Wrapper(
        "os.stat",
        "no audit event; ignore= must make paths not exist",
        "tests/unit/guard/test_files.py::test_ignore_hides_from_stat_and_listings",
        True,
    ),
    Wrapper("os.lstat", "as os.stat", "tests/unit/guard/test_files.py", True),
    Wrapper("os.access", "as os.stat", "tests/unit/guard/test_files.py", True),
    Wrapper(
        "os.listdir",
        "the event is raised before the listing: names are filtered after",
        "tests/unit/guard/test_files.py::test_ignore_hides_from_stat_and_listings",
        True,
    ),
    Wrapper("os.scandir", "as os.listdir", "tests/unit/guard/test_files.py", True),
    *(
        Wrapper(
            f"{module}.{function}",
            "libc or libreadline opens a file with no audit event: the open event of that file",
            "tests/unit/guard/test_native_files.py",
        )
        for module, functions in NATIVE_WRAPPED.items()
        if module not in SUBINTERPRETERS
        for function in functions
    ),
    *(
        Wrapper(
            f"{module}.{function}",
            "makes an interpreter without the program's audit hook (3.13's _interpreters.create "
            "and the test modules' raise no event): process-exec, judged before the C code runs",
            "tests/redteam/review/attacks/process_subinterpreter_unguarded.py",
        )
        for module, functions in SUBINTERPRETERS.items()
        for function in functions
    ),
    Wrapper(
        "ssl.SSLContext.load_cert_chain",
        "OpenSSL reads the files with no audit event: the open event of each (a subclass of "
        "_ssl._SSLContext put in its place when _ssl is executed)",
        "tests/unit/guard/test_native_files.py::test_ssl_files_are_judged",
    ),
    Wrapper(
        "ssl.SSLContext.load_verify_locations",
        "as load_cert_chain (cafile and capath)",
        "tests/unit/guard/test_native_files.py::test_ssl_files_are_judged",
    ),
    Wrapper(
        "sys.activate_stack_trampoline",
        "3.12+: CPython writes /tmp/perf-PID.map with no audit event: the open event of it",
        "tests/unit/guard/test_native_files.py::test_perf_map_is_a_write_of_tmp",
    ),
    Wrapper(
        "_imp.exec_dynamic",
        "_ssl's types exist once it is executed: _SSLContext is replaced then",
        "tests/unit/guard/test_native_files.py::test_ssl_files_are_judged",
    ),
    Wrapper(
        "os.putenv",
        "not judged: recorded after the call in the guard's copy of the C environment, which "
        "libreadline and OpenSSL read when they start (os.environ misses os.putenv alone)",
        "tests/unit/guard/test_native_files.py::test_readline_import_reads_a_chosen_init_file",
    ),
    Wrapper(
        "os.unsetenv",
        "as os.putenv",
        "tests/unit/guard/test_native_files.py::test_readline_import_reads_a_chosen_init_file",
    ),
    Wrapper(
        "_imp.create_dynamic",
        "a module of NATIVE_WRAPPED created after arming (a fresh copy too) is wrapped",
        "tests/unit/guard/test_native_files.py::test_fresh_copies_and_early_aliases_are_wrapped",
    ),
    Wrapper(
        "os.environ",
        "reads raise no event; recorded in learn/audit mode only",
        "tests/unit/guard/test_learn.py",
    ),
)

_CALL_WRAPPED = (
    ("_posixsubprocess", "fork_exec", "_posixsubprocess.fork_exec"),
    ("_thread", "start_new_thread", "_thread.start_new_thread"),
    ("_thread", "start_new", "_thread.start_new_thread"),
    ("_thread", "start_joinable_thread", "_thread.start_new_thread"),  # threading, 3.13+
    ("_thread", "interrupt_main", "_thread.interrupt_main"),
    ("_thread", "stack_size", "_thread.stack_size"),
    *((os.name, name, "os." + name) for name in _OS_WRAPPED),  # posix, or nt (Windows)
    ("_signal", "pidfd_send_signal", "signal.pidfd_send_signal"),
    ("_signal", "alarm", "signal.alarm"),
    ("_signal", "setitimer", "signal.setitimer"),
    ("faulthandler", "enable", "faulthandler.enable"),
    ("faulthandler", "dump_traceback_later", "faulthandler.enable"),
    ("faulthandler", "register", "faulthandler.enable"),
)


if TYPE_CHECKING:
    Before = Callable[[tuple[Any, ...], dict[str, Any]], tuple[tuple[Any, ...], dict[str, Any]]]


def hide(
    fn: Callable[..., Any],
    kit: Kit,
    before: Before,
    after: Callable[[Any, tuple[Any, ...], dict[str, Any]], Any] | None = None,
    marker: Any = None,
    _hide: Callable[..., Any] = hide_reentrant,  # bound at import: hide also runs after arming
) -> Callable[[tuple[Any, ...], dict[str, Any]], Any]:
    """``call(args, kwargs)``: ``before`` (which raises the audit event, and may rewrite the
    arguments) then ``fn``, with ``fn`` kept in a suspended generator only.

    Keeping the event inside the generator matters as much as hiding ``fn``: a closure cell
    can be *written* without an audit event, so a wrapper holding ``sys.audit`` in a cell
    could be disarmed by replacing it. The exception of a refusal leaves without its traceback
    (which would lead to the generator's frame).

    The C function may run the program's code while it runs -- the ``__index__`` of a flag
    (``attacks/r3_files_open_flags_index.py``), an ``__eq__``, a callback -- and that code can
    walk ``f_back`` from a frame it kept earlier: so no frame on the stack while ``fn`` runs
    holds ``fn`` or a way to it. Each call gets a one-shot generator that pops ``fn`` from a
    list just before calling it (:func:`pysandboxes.guard.native_files.hide_reentrant`); a
    request is taken only as an exact ``(tuple, dict)`` pair, and nothing the program sends
    or throws into a generator runs its code there.
    """

    return _hide(fn, kit, before, after, False, marker)  # type: ignore[no-any-return]


def _named(
    wrapper: Callable[..., Any],
    original: Any,
    _getattr: Callable[..., Any] = getattr,  # bound at import: called after arming too
    _setattr: Callable[[Any, str, Any], None] = setattr,
    _errors: tuple[type[BaseException], ...] = (AttributeError, TypeError),
) -> Callable[..., Any]:
    for attr in ("__name__", "__qualname__", "__doc__"):
        try:  # noqa: SIM105  (no contextlib import on the start-up path)
            _setattr(wrapper, attr, _getattr(original, attr))
        except _errors:
            pass
    module = _getattr(original, "__module__", None) or "os"
    # The signal module's own functions are Python functions named for "signal" (its wrapped
    # C functions come from _signal): test_signal checks that every Python function there
    # says "signal", for pydoc (issue 27, cause 8).
    wrapper.__module__ = "signal" if module == "_signal" else module
    return wrapper


def _announce(function: str, audit: Callable[..., None]) -> Before:
    def before(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        audit("pysandboxes.call", function)
        return args, kwargs

    return before


_PLAIN = (str, bytes, int, bool, float, type(None), tuple, list, dict)  # no __fspath__
_warn = __import__("_warnings").warn  # C, always loaded (the warnings module may not be)


def _wrapper(
    call: Callable[[tuple[Any, ...], dict[str, Any]], Any],
    path_of: str | None = None,
    _fspath: Any = os.fspath,
    _type: Any = type,
    _mro_of: Any = type.__dict__["__mro__"].__get__,
    _dict_of: Any = type.__dict__["__dict__"].__get__,
    _tuple: Any = tuple,
    _plain: Any = _PLAIN,
    _buffers: tuple[type, ...] = (bytearray, memoryview),
    _bytes: Any = bytes,
    _warn: Any = _warn,
    _deprecated: bool = sys.version_info < (3, 12),
    _errors: tuple[type[Exception], type[Warning]] = (TypeError, DeprecationWarning),
) -> Callable[..., Any]:
    """The wrapper put in place of a function: path-like arguments are converted here, once,
    so that no code of the program runs inside the hidden generator (where a frame it kept
    could walk ``f_back`` to the generator's frame and its ``f_locals``).

    ``path_of``: the function's name when its first argument (or ``path=``) is a path. A
    ``bytearray`` or ``memoryview`` path is then what CPython makes of it (issue 27, cause 4):
    3.11 warns (``DeprecationWarning``, CPython's text) and uses a ``bytes`` copy -- made
    here, once, so the path judged is the path used -- and 3.12 raises its ``TypeError``."""

    def convert(value: Any) -> Any:
        kind = _type(value)
        if kind in _plain:
            return value
        for base in _mro_of(kind):
            if "__fspath__" in _dict_of(base):
                return _fspath(value)
        return value

    tuple_ = _tuple  # bound at import: _wrapper also runs after arming
    buffers, bytes_, warn, deprecated = _buffers, _bytes, _warn, _deprecated
    type_error, deprecation = _errors

    def use_buffer(value: Any) -> Any:
        text = (
            f"{path_of}: path should be string, bytes or os.PathLike, not {_type(value).__name__}"
        )
        if not deprecated:
            raise type_error(text)
        warn(text, deprecation, 3)  # the program's line, as CPython's own warning
        return bytes_(value)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if args:
            args = tuple_([convert(value) for value in args])
            if path_of is not None and _type(args[0]) in buffers:
                args = (use_buffer(args[0]), *args[1:])
        if kwargs:
            kwargs = {key: convert(value) for key, value in kwargs.items()}
            if path_of is not None and _type(kwargs.get("path")) in buffers:
                kwargs["path"] = use_buffer(kwargs["path"])
        return call(args, kwargs)

    return wrapper


def _replace_everywhere(replacements: dict[int, Any], modules: list[Any]) -> None:
    """One pass over every loaded module: each alias of an original becomes its wrapper."""

    originals = replacements.keys()
    for module in modules:
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        # Most modules hold no original: that is found in C, without a Python-level loop over
        # each of their names (a few milliseconds of every start over some 130 modules).
        if originals.isdisjoint(map(id, namespace.values())):
            continue
        found = [(key, value) for key, value in namespace.items() if id(value) in replacements]
        for key, value in found:
            namespace[key] = replacements[id(value)][1]
    _update_support_sets(replacements)


#: The sets ``os`` keeps of the functions that take ``dir_fd``, a descriptor, or
#: ``follow_symlinks``/``effective_ids``: ``shutil`` chooses its symlink-attack-safe
#: ``rmtree`` by them, so a wrapper must stand where its original stood (issue 27, cause 2).
_SUPPORT_SETS = (
    "supports_dir_fd",
    "supports_fd",
    "supports_follow_symlinks",
    "supports_effective_ids",
)


def _update_support_sets(replacements: dict[int, Any]) -> None:
    """Put each wrapper in ``os.supports_*`` where its original is a member (``replacements``:
    ``id(original) -> (original, wrapper)``)."""

    for name in _SUPPORT_SETS:
        members = getattr(os, name, None)
        if type(members) is not set:
            continue
        for member in list(members):
            pair = replacements.get(id(member))
            if pair is not None and pair[0] is member:
                members.discard(member)
                members.add(pair[1])


def install(kit: Kit, *, with_ignore: bool) -> None:
    """Put every wrapper in place (see the module docstring)."""

    if os.name == "posix":  # no _posixsubprocess on Windows (subprocess uses _winapi there)
        import _posixsubprocess  # noqa: F401  (wrapped now, so no later import is unwrapped)
    import faulthandler  # noqa: F401
    import importlib  # noqa: F401  (for reload; small, and most programs load it anyway)

    audit = kit.audit
    modules = [m for m in list(sys.modules.values()) if m is not None]
    replacements: dict[int, Any] = {}  # id(original) -> (original, wrapper)
    for module_name, attr, function in _CALL_WRAPPED:
        module = sys.modules.get(module_name)
        original = getattr(module, attr, None) if module is not None else None
        if original is None:
            continue
        call = hide(original, kit, _announce(function, audit))
        replacements[id(original)] = (original, _named(_wrapper(call), original))
    _wrap_reload(kit, replacements)
    _wrap_file_creation(kit, replacements)
    from pysandboxes.guard import native_files

    _load_shared_memory()  # before native_files wraps the modules already loaded
    wrap_module = native_files.install(kit, replacements, hide, _named, _wrapper)
    _wrap_create_builtin(kit, replacements, wrap_module)
    _wrap_gc_debug(kit, replacements)
    _wrap_perf_map(kit, replacements)
    _replace_everywhere(replacements, modules)
    if with_ignore:
        _wrap_ignore_helpers(kit)


def _load_shared_memory() -> None:
    """``_posixshmem.shm_open``/``shm_unlink`` (``multiprocessing.shared_memory``) open and
    remove ``/dev/shm/NAME`` in C with no audit event: they raise the ``open`` and
    ``os.remove`` events of that path, judged by the file rules (``native_files``, which also
    wraps every fresh copy ``_imp.create_dynamic`` makes). Imported now, a small extension."""

    try:
        import _posixshmem  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:  # not built on this platform
        return


def _wrap_gc_debug(kit: Kit, replacements: dict[int, Any]) -> None:
    """``gc.set_debug`` with ``DEBUG_SAVEALL`` (no audit event) puts every object the collector
    frees into ``gc.garbage``, a list the program reads: frames and tracebacks it never held,
    with no ``gc.get_objects``-style event. Introspection, judged when the flag is asked for."""

    import gc

    original = gc.set_debug
    audit = kit.audit
    saveall = gc.DEBUG_SAVEALL
    index = int.__index__

    def announce_debug(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        flags = args[0] if args else kwargs.get("flags", 0)
        flags = index(flags)  # read once: an int subclass cannot answer twice
        if flags & saveall:
            audit("pysandboxes.call", "gc.set_debug")
        return (flags,), {}

    call = hide(original, kit, announce_debug)
    replacements[id(original)] = (original, _named(_wrapper(call), original))


def _wrap_perf_map(kit: Kit, replacements: dict[int, Any]) -> None:
    """``sys.activate_stack_trampoline`` (3.12+) has CPython write ``/tmp/perf-PID.map`` (the
    perf map of the trampolines it makes) with no audit event, whatever ``TMPDIR`` says: the
    ``open`` event of that file (a write) first."""

    original = getattr(sys, "activate_stack_trampoline", None)
    if original is None:
        return
    audit = kit.audit
    getpid = os.getpid
    repr_ = int.__repr__
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND

    def announce_map(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        audit("open", "/tmp/perf-" + repr_(getpid()) + ".map", "a", flags)
        return args, kwargs

    call = hide(original, kit, announce_map)
    replacements[id(original)] = (original, _named(_wrapper(call), original))


def _wrap_create_builtin(
    kit: Kit, replacements: dict[int, Any], wrap_module: Callable[[Any], Any]
) -> None:
    """``_imp.create_builtin(spec)`` builds a *fresh* built-in module (a ``posix`` whose
    functions are not wrapped) and raises no audit event: announce the name
    (``pysandboxes.create_builtin``, refused for the wrapped modules) and hand CPython a new
    spec holding that name only, so that a spec whose ``name`` answers twice decides nothing.
    The module it returns goes through ``wrap_module`` (``pwd``: see ``native_files``)."""

    import _imp
    from _frozen_importlib import ModuleSpec

    audit = kit.audit
    str_ = str
    mro_of = type.__dict__["__mro__"].__get__
    type_ = kit.type
    type_error = TypeError
    module_spec = ModuleSpec

    spec_dict = ModuleSpec.__dict__["__dict__"].__get__
    field = exact_field  # captured: the module global could be rebound
    # The spec passed on: a C type whose attributes cannot be replaced (native_files'
    # _fresh_spec says why a ModuleSpec is not).
    namespace: Any = type(sys.implementation)  # types.SimpleNamespace

    namespace_dict = namespace.__dict__["__dict__"].__get__

    def announce(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        spec = args[0] if args else kwargs.get("spec")
        if type_(spec) is module_spec:
            values = spec_dict(spec)
        elif type_(spec) is namespace:  # another importlib's spec, read by foreign_spec
            values = namespace_dict(spec)
        else:  # a subclass's properties would run program code
            raise type_error("create_builtin() needs a ModuleSpec")
        name = field(values, "name")  # no key's __eq__ runs (exact_field)
        for base in mro_of(type_(name)):
            if base is str_:
                name = str_.__str__(name)
                break
        else:
            raise type_error("create_builtin() needs a spec with a str name")
        audit("pysandboxes.create_builtin", name)
        fresh = namespace(name=name, origin="built-in")
        return (fresh,), {}

    def after(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return wrap_module(module)

    original = _imp.create_builtin
    call = hide(original, kit, announce, after)
    replacements[id(original)] = (original, _named(foreign_spec(_wrapper(call)), original))


def _wrap_reload(kit: Kit, replacements: dict[int, Any]) -> None:
    importlib = sys.modules.get("importlib")
    original = getattr(importlib, "reload", None)
    if original is None:
        return
    call = hide(original, kit, _announce("importlib.reload", kit.audit))
    replacements[id(original)] = (original, _named(_wrapper(call), original))


#: Kit fields read by index, not through the record class's properties: class attributes can
#: be replaced with no audit event in CPython 3.11 (attacks/r3_files_kit_field_property.py).
_KIT_TYPE, _KIT_FSPATH, _KIT_STR_EXACT, _KIT_BYTES_EXACT = (
    Kit._fields.index(name) for name in ("type", "fspath", "str_exact", "bytes_exact")
)


def exact_path(
    path: Any,
    _int: type = int,
    _type: Callable[[object], Any] = type,
    _fspath: Callable[[Any], Any] = os.fspath,
    _str_exact: Callable[[str], str] = str.__str__,
    _bytes_exact: Callable[[bytes], bytes] = bytes.__bytes__,
    _type_error: type[Exception] = TypeError,
) -> Any:
    """``path`` as an exact ``str`` or ``bytes``, ``__fspath__`` called once (``None`` and
    descriptors unchanged): what an exposed wrapper passes on, so that a ``str`` subclass or a
    path-like object answering differently each time decides nothing.

    For the *exposed* side only (it runs the program's ``__fspath__``): what it returns is
    checked again, exactly, where a judgment is made. It holds public builtins alone -- no
    :class:`~pysandboxes.guard.kit.Kit`, whose raw ``posix.open`` and ``stat`` a program
    reaching this function through a wrapper's closure would have
    (``attacks/files_kit_from_exposed_closure.py``) -- as positional defaults, bound at import
    (arm time): a tuple of defaults cannot change, a ``__kwdefaults__`` dict could be changed
    item by item with no audit event. Callers pass ``path`` alone."""

    if path is None or _type(path) is _int:
        return path
    try:
        text = _fspath(path)
    except _type_error:
        return path  # a descriptor (int subclass) or an error of the real function's own
    try:
        return _str_exact(text)
    except _type_error:
        return _bytes_exact(text)


def _wrap_file_creation(kit: Kit, replacements: dict[int, Any]) -> None:
    exact = exact_text  # captured: the module global could be rebound; runs no program code
    audit = kit.audit
    encoding = kit.fs_encoding
    posix = sys.modules[os.name]  # the C module: posix, or nt on Windows
    int_, str_, bytes_, type_ = int, str, bytes, type

    def announce_creation(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # The object judged is the object used: an exact str/bytes made once.
        if args:
            path = exact(kit, args[0])
            args = (path, *args[1:])
        else:
            path = exact(kit, kwargs.get("path"))
            kwargs = {**kwargs, "path": path}
        dir_fd = kwargs.get("dir_fd")
        audit("pysandboxes.mknod", path, -1 if dir_fd is None else dir_fd)
        return args, kwargs

    def announce_node(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``os.mknod``: a character or block device node is a way to a device that no rule
        grants (its later open is judged by its path only): ``privileges``. The mode is made
        an exact int here (no ``__index__`` of the program's runs in the C call)."""

        args, kwargs = announce_creation(args, kwargs)
        mode = args[1] if len_(args) > 1 else kwargs.get("mode", regular_mode)
        if type_(mode) is not int_:
            if not is_int(mode):
                raise type_error("mknod(): mode must be an int")
            mode = index(mode)  # C: the value of an int subclass, no program code
        if mode & s_ifmt in device_types:
            audit("pysandboxes.call", "os.mknod")
        if len_(args) > 1:
            args = (args[0], mode, *args[2:])
        else:
            kwargs = {**kwargs, "mode": mode}
        return args, kwargs

    len_ = kit.len
    index = int_.__index__
    type_error = TypeError
    mro_of = type.__dict__["__mro__"].__get__
    regular_mode, s_ifmt = 0o600, 0o170000
    device_types = (0o020000, 0o060000)  # S_IFCHR, S_IFBLK

    def is_int(value: Any) -> bool:
        for base in mro_of(type_(value)):  # noqa: SIM110 (any() is a global read at run time)
            if base is int_:
                return True
        return False

    for name, before in (("mkfifo", announce_creation), ("mknod", announce_node)):
        original = getattr(posix, name, None)
        if original is not None:
            call = hide(original, kit, before)
            replacements[id(original)] = (original, _named(_wrapper(call, name), original))

    def rewrite_dir_fd(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``open(path, flags, dir_fd=N)`` with a relative path becomes
        ``open("/proc/self/fd/N/path", flags)``: the ``open`` event has no ``dir_fd``.

        The path is converted once (``__fspath__`` called once) to an exact ``str``/``bytes``
        and that object is what ``posix.open`` gets: a ``str`` subclass whose methods lie, or
        a path-like object answering differently the second time, decides nothing.
        """

        if args:
            raw, rest = args[0], args[1:]
        elif "path" in kwargs:
            raw, rest = kwargs["path"], ()
            kwargs = {k: v for k, v in kwargs.items() if k != "path"}
        else:
            return args, kwargs
        text = exact(kit, raw)  # path-like objects were converted by the wrapper
        if type_(text) is not str_ and type_(text) is not bytes_:
            return (text, *rest), kwargs  # a descriptor: posix.open's own TypeError
        dir_fd = kwargs.get("dir_fd")
        if dir_fd is not None:
            decoded = text if type_(text) is str_ else text.decode(encoding, "surrogateescape")
            if not decoded.startswith("/"):
                kwargs = {k: v for k, v in kwargs.items() if k != "dir_fd"}
                number = int_.__index__(dir_fd)  # C: no __int__/__index__ of a subclass runs
                text = "/proc/self/fd/" + int_.__repr__(number) + "/" + decoded
        return (text, *rest), kwargs

    original_open = posix.open
    call_open = hide(original_open, kit, rewrite_dir_fd)
    wrapped_open = _named(_wrapper(call_open, "open"), original_open)
    replacements[id(original_open)] = (original_open, wrapped_open)


def exact_text(
    kit: Kit,
    path: Any,
    _type_error: type[Exception] = TypeError,
    _int: type = int,
    _mro_of: Any = type.__dict__["__mro__"].__get__,
    _item: Callable[[Any, int], Any] = tuple.__getitem__,
    _fields: tuple[int, int, int, int] = (_KIT_TYPE, _KIT_FSPATH, _KIT_STR_EXACT, _KIT_BYTES_EXACT),
) -> Any:
    """As :func:`exact_path`, for the ``before`` of a hidden wrapper: runs no code of the
    program. A ``str``/``bytes`` (subclass) becomes an exact copy in C; ``None`` and ints are
    unchanged; a path-like object must have been converted already -- :func:`_wrapper` calls
    ``__fspath__`` outside the generator (program code running inside it could walk a kept
    frame's ``f_back`` to the generator's frame, which holds the original), and a call that
    bypasses the wrapper gets ``TypeError``.

    The hidden generators call it after arming and this module is in ``sys.modules``: what it
    uses is bound at import as *positional* defaults (a tuple, which cannot change; the dict of
    keyword defaults could be changed item by item with no audit event:
    ``attacks/files_exact_text_kwdefaults_in_place.py``). Callers pass ``kit`` and ``path``."""

    if path is None:
        return path
    kind = _item(kit, _fields[0])(path)
    if kind is _int:
        return path
    try:
        return _item(kit, _fields[2])(path)
    except _type_error:
        pass
    try:
        return _item(kit, _fields[3])(path)
    except _type_error:
        pass
    for base in _mro_of(kind):  # by identity: "in" would call a metaclass's __eq__
        if base is _int:
            return path  # an int subclass: a descriptor (read in C, no __index__ call)
    raise _type_error("expected str, bytes or os.PathLike object (converted by the wrapper)")


_exact_path, _exact_text = exact_path, exact_text  # for _wrap_ignore_helpers


class FilteredScandir:
    """What the ``os.scandir`` wrapper returns: the entries the hook did not hide."""

    def __init__(self, entries: list[Any]) -> None:
        self._entries = iter(entries)

    def __iter__(self) -> FilteredScandir:
        return self

    def __next__(self) -> Any:
        return next(self._entries)

    def __enter__(self) -> FilteredScandir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._entries = iter(())


def _stat_calls(kit: Kit, stat: Any, lstat: Any, access: Any) -> tuple[Any, Any, Any]:
    """The hidden ``stat``/``lstat``/``access`` calls of :func:`_wrap_ignore_helpers`: the
    ``pysandboxes.stat`` event (which hides an ignored path) is raised inside the hidden
    generator, on arguments made exact here with no code of the program running (an ``int``
    subclass's value, exact ``bool``), so that neither the original nor the event can be taken
    out of, or rewritten in, a closure the program reads."""

    audit = kit.audit
    type_, str_, bytes_, bool_ = type, str, bytes, bool
    index = int.__index__  # C: the value of an int (subclass), no program code
    type_error = TypeError
    len_ = kit.len

    def exact(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        path = args[0] if args else None
        kind = type_(path)
        if kind is not str_ and kind is not bytes_ and path is not None:
            path = index(path)  # a descriptor; TypeError for anything else
        dir_fd = kwargs.get("dir_fd")
        if dir_fd is not None:
            dir_fd = index(dir_fd)
        flags = {}
        for name, value in kwargs.items():
            if name != "dir_fd":
                if type_(value) is not bool_:
                    raise type_error(f"{name} must be a bool")
                flags[name] = value
        audit("pysandboxes.stat", path, -1 if dir_fd is None else dir_fd)
        if len_(args) > 1:  # access's mode
            return (path, index(args[1])), {"dir_fd": dir_fd, **flags}
        return (path,), {"dir_fd": dir_fd, **flags}

    return (
        hide(stat, kit, exact),
        hide(lstat, kit, exact),
        hide(access, kit, exact),
    )


def _listing_calls(kit: Kit, listdir: Any, scandir: Any) -> tuple[Any, Any]:
    """The hidden ``listdir``/``scandir`` calls of :func:`_wrap_ignore_helpers`, made in a
    scope of their own: the exposed ``os.stat``/``os.listdir`` helpers' closure cells can be
    read and rewritten with no audit event, and must not be the cells these hidden functions
    use (``audit``, ``kit``: a rewritten ``audit`` would stop the filtering of listings)."""

    audit = kit.audit
    exact_text, list_, filtered = _exact_text, list, FilteredScandir

    def exact_argument(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        path = exact_text(kit, args[0] if args else kwargs.pop("path", None))
        return ((path,) if path is not None else ()), {}

    def filter_names(names: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        audit("pysandboxes.filter", args[0] if args else ".", names)
        return names

    def filter_entries(found: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        with found:
            entries = list_(found)
        audit("pysandboxes.filter", args[0] if args else ".", entries)
        return filtered(entries)

    return (
        hide(listdir, kit, exact_argument, filter_names),
        hide(scandir, kit, exact_argument, filter_entries),
    )


def _wrap_ignore_helpers(kit: Kit) -> None:
    """``os.stat``-family and listings, as ``os`` attributes only (see module docstring)."""

    stat, lstat, access = os.stat, os.lstat, os.access
    listdir, scandir = os.listdir, os.scandir
    exact_path = _exact_path  # captured: globals could be rebound; holds no Kit
    not_found = FileNotFoundError
    to_index, truth = int.__index__, bool  # run here, outside the hidden generators
    # The originals are kept in hidden generators: a closure would hand the raw os.stat, which
    # no event judges, to anyone reading __closure__ (attacks/files_ignored_closure_*).
    stat_call, lstat_call, access_call = _stat_calls(kit, stat, lstat, access)

    def descriptor(dir_fd: Any) -> Any:
        return None if dir_fd is None else to_index(dir_fd)

    def stat_(path: Any, *, dir_fd: Any = None, follow_symlinks: bool = True) -> Any:
        return stat_call(
            (exact_path(path),),
            {"dir_fd": descriptor(dir_fd), "follow_symlinks": truth(follow_symlinks)},
        )

    def lstat_(path: Any, *, dir_fd: Any = None) -> Any:
        return lstat_call((exact_path(path),), {"dir_fd": descriptor(dir_fd)})

    def access_(
        path: Any,
        mode: int,
        *,
        dir_fd: Any = None,
        effective_ids: bool = False,
        follow_symlinks: bool = True,
    ) -> bool:
        try:
            return access_call(  # type: ignore[no-any-return]
                (exact_path(path), to_index(mode)),
                {
                    "dir_fd": descriptor(dir_fd),
                    "effective_ids": truth(effective_ids),
                    "follow_symlinks": truth(follow_symlinks),
                },
            )
        except not_found:
            return False  # os.access answers, it does not raise

    # Listings: the originals kept in hidden generators (they are posix's own functions, which
    # are replaced too, so that posix.listdir hides the ignored names as well).
    list_call, scan_call = _listing_calls(kit, listdir, scandir)

    def listdir_(path: Any = None) -> list[Any]:
        path = exact_path(path)  # __fspath__ here, outside the hidden generator
        return list_call((path,), {})  # type: ignore[no-any-return]

    def scandir_(path: Any = None) -> FilteredScandir:
        path = exact_path(path)
        return scan_call((path,), {})  # type: ignore[no-any-return]

    os.stat = _named(stat_, stat)
    os.lstat = _named(lstat_, lstat)
    os.access = _named(access_, access)
    posix: Any = sys.modules[os.name]  # the C module: posix, or nt on Windows
    os.listdir = posix.listdir = _named(listdir_, listdir)
    os.scandir = posix.scandir = _named(scandir_, scandir)
    pairs: tuple[tuple[Any, Any], ...] = ((stat, os.stat), (lstat, os.lstat))
    pairs += ((access, os.access), (listdir, os.listdir), (scandir, os.scandir))
    replaced: dict[int, Any] = {}
    for original, wrapper in pairs:
        replaced[id(original)] = (original, wrapper)
    _update_support_sets(replaced)
