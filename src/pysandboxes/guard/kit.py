"""The primitives the guard uses at run time, captured once when it is armed.

Everything the audit hook calls while the program runs must be out of the program's reach: a
module attribute (``os.path.realpath``), a builtin (``builtins.isinstance``) or a class
attribute (``Denial.__init__``) can be replaced by the program, and a replaced function would
then run *inside* the hook, with the hook's frames on the stack. So the guard's closures never
look a name up at run time: they use the C functions collected here, taken before any program
code ran, and data made only of ``str``, ``int``, ``tuple``, ``frozenset``, ``dict`` and
compiled patterns.

Nothing here is kept in a module global: :func:`capture` returns a fresh :class:`Kit` that the
guard's factories close over. A Kit may still be reached by a program (a closure of the guard
it gets hold of: ``attacks/files_kit_from_exposed_closure.py``), so it holds nothing the
program could not take itself: no original the guard wraps (the raw ``posix.open``, whose
``dir_fd`` the ``open`` event does not carry, is captured by the one closure that needs it,
``guard/denials.py``).
"""

from __future__ import annotations

import _json
import _thread
import errno as _errno
import gc
import sys

from pysandboxes.errors import Denial

# The operating system's C module (``posix``, or ``nt`` on Windows): the functions are taken
# from it rather than from ``os``, whose attributes are plain Python module globals. Chosen by
# what the interpreter has (``os.name``), which mypy's ``--platform`` checks also understand.
if sys.platform == "win32":
    import nt as native
else:
    import posix as native

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType
    from typing import Any, NamedTuple
else:
    from pysandboxes.record import NamedTuple


class Kit(NamedTuple):
    """C-level callables, taken before the program runs (see the module docstring)."""

    type: Callable[[object], Any]
    len: Callable[[Any], int]
    str_exact: Callable[[str], str]  # str.__str__: an exact ``str`` copy of a subclass
    bytes_exact: Callable[[bytes], bytes]
    decode: Callable[..., str]  # bytes.decode
    lstat: Callable[..., Any]
    stat: Callable[..., Any]
    readlink: Callable[..., str]
    getcwd: Callable[[], str]
    write: Callable[[int, bytes], int]
    close: Callable[[int], None]
    fspath: Callable[[Any], Any]
    getframe: Callable[[int], FrameType]
    get_ident: Callable[[], int]
    allocate_lock: Callable[[], Any]
    audit: Callable[..., None]
    json_str: Callable[[str], str]  # _json.encode_basestring_ascii
    object_new: Callable[..., Any]
    exc_new: Callable[..., BaseException]
    oserror_init: Callable[..., None]
    importerror_init: Callable[..., None]
    dict_of: Callable[[object], dict[str, Any]]  # BaseException.__dict__ getter
    denial_slots: tuple[Callable[[Any, Any], None], ...]  # Denial's slot setters, field order
    fs_encoding: str
    sorted: Callable[..., list[Any]]
    repr: Callable[[object], str]
    int_from_bytes: Callable[..., int]
    eacces: int
    enoent: int
    gc_isenabled: Callable[[], bool]
    gc_disable: Callable[[], None]
    gc_enable: Callable[[], None]
    #: ``object.__hash__``: an identity key like ``id()`` (the address, rotated: distinct for
    #: distinct live objects), from the base type's C slot whatever the object's type, and
    #: without the ``builtins.id`` audit event that ``id()`` raises -- the frame walks call it
    #: once per frame, and each event re-entering the hook cost more than the walk itself.
    identity: Callable[[object], int]


def capture() -> Kit:
    """Collect the primitives now (at arm time)."""

    base_dict = BaseException.__dict__["__dict__"]
    names = ("kind", "target", "rule", "origin", "suggestion", "detail")
    slots = tuple(Denial.__dict__[name].__set__ for name in names)
    return Kit(
        type=type,
        len=len,
        str_exact=str.__str__,
        bytes_exact=bytes.__bytes__,
        decode=bytes.decode,
        lstat=native.lstat,
        stat=native.stat,
        readlink=native.readlink,
        getcwd=native.getcwd,
        write=native.write,
        close=native.close,
        fspath=native.fspath,
        getframe=sys._getframe,
        get_ident=_thread.get_ident,
        allocate_lock=_thread.allocate_lock,
        audit=sys.audit,
        json_str=_json.encode_basestring_ascii,
        object_new=object.__new__,
        exc_new=BaseException.__new__,
        oserror_init=OSError.__init__,
        importerror_init=ImportError.__init__,
        dict_of=base_dict.__get__,
        denial_slots=slots,
        fs_encoding=sys.getfilesystemencoding(),
        sorted=sorted,
        repr=repr,
        int_from_bytes=int.from_bytes,
        eacces=_errno.EACCES,
        enoent=_errno.ENOENT,
        gc_isenabled=gc.isenabled,
        gc_disable=gc.disable,
        gc_enable=gc.enable,
        identity=object.__hash__,
    )


Busy = tuple[int, bool, bool]


def make_busy(kit: Kit, busy: dict[int, int]) -> tuple[Callable[[], Busy], Callable[[Busy], None]]:
    """``enter()``/``leave(state)`` around the guard's own work that raises nested events.

    While a thread is busy, the hook lets the events the guard itself causes through (reading
    ``f_code``, its own ``sys._getframe``, its own DNS query). No program code may run then: a
    ``__del__`` or weak-reference callback started by the cyclic garbage collector would run
    with the busy mark set, so the collector is paused for the duration (and restored).
    """

    get_ident = kit.get_ident
    isenabled, disable, enable = kit.gc_isenabled, kit.gc_disable, kit.gc_enable

    def enter() -> Busy:
        was = isenabled()
        if was:
            disable()
        ident = get_ident()
        nested = ident in busy
        busy[ident] = 1
        return ident, nested, was

    def leave(state: Busy) -> None:
        ident, nested, was = state
        if not nested:
            del busy[ident]
        if was:
            enable()

    return enter, leave


def valid_request(
    request: Any,
    _type: Callable[[object], Any] = type,
    _tuple: type = tuple,
    _dict: type = dict,
    _str: type = str,
    _len: Callable[[Any], int] = len,
) -> bool:
    """An exact ``(tuple, dict)`` pair whose dict has exact ``str`` keys (checked without
    running any code of the program: exact types, C iteration).

    Every hidden generator calls it (:func:`pysandboxes.guard.native_files.hide_reentrant`)
    while it still holds the original it keeps, and this module is in ``sys.modules``: the
    builtins it uses are *positional* defaults, bound at import (arm time). A tuple of defaults
    cannot change (assigning ``__defaults__`` raises an audit event, refused), where closure
    cells and a ``__kwdefaults__`` dict can be rewritten with no event
    (``attacks/files_request_check_cell.py``). Callers pass ``request`` alone."""

    if _type(request) is not _tuple or _len(request) != 2:
        return False
    args, kwargs = request
    if _type(args) is not _tuple or _type(kwargs) is not _dict:
        return False
    for key in kwargs:  # noqa: SIM110 (all() would be a global read at run time)
        if _type(key) is not _str:
            return False
    return True


def bad_request(_type_error: type[Exception] = TypeError) -> BaseException:
    """The exception for a request :func:`valid_request` refuses (a positional default, as
    there: called with no argument)."""

    return _type_error("python-sb: a wrapped function was called the wrong way")
