"""What comes back from the worker, decoded as data: results and exceptions.

The worker runs code under the rules; what it sends back must not run code in the caller. A
pickle can name any global and call it (``os.system``), so results are decoded by
``partial.decode`` (bounded in depth, nodes, decoded bytes and time; data types built by checked
builders), whose ``find_class`` resolves only the types of an allow-list:

- by default (``returns="data"``): the builtin containers and scalars (which need no global at
  all), ``set``, ``frozenset``, ``bytearray``, ``complex``, ``slice``, ``range``, dates and times,
  ``Decimal``, ``Fraction``, ``UUID``, pure and concrete paths, ``OrderedDict``, ``defaultdict``,
  ``deque``, ``Counter``;
- plus the classes the caller names (``returns=[MyRecord, ...]``);
- or anything already imported in the caller (``returns="objects"``): plain ``pickle``
  semantics, for results from code the caller trusts as much as its own.

Exceptions come back as plain data (a pickle naming no global: ``partial.worker.error_record``),
decoded with no global allowed and checked as plain data, node-bounded (``decode.decode_record``),
and are rebuilt by :func:`rebuild_error` with their own class when the caller has it loaded and
it is an ``Exception`` (not a host-side error of partial mode), else as
:class:`~pysandboxes.partial.errors.SandboxedError`; the refusals of the chain are kept
(``sandbox_denials``) and the sandboxed traceback -- the worker's own text, bounded, never a file
read here -- is attached as a note and as ``remote_traceback``.
"""

from __future__ import annotations

import sys

from pysandboxes.errors import Denial, SandBoxError
from pysandboxes.partial.decode import decode as _decode
from pysandboxes.partial.errors import PartialModeError, SandboxedError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

#: (module, name) pairs a result may name by default.
DATA_GLOBALS = frozenset(
    {
        ("builtins", name)
        for name in (
            "set",
            "frozenset",
            "bytearray",
            "complex",
            "slice",
            "range",
            "list",
            "dict",
            "tuple",
            "int",
            "float",
            "str",
            "bytes",
            "bool",
        )
    }
    | {("datetime", n) for n in ("date", "time", "datetime", "timedelta", "timezone")}
    | {("decimal", "Decimal"), ("fractions", "Fraction"), ("uuid", "UUID"), ("uuid", "SafeUUID")}
    | {
        ("pathlib", n)
        for n in ("PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath")
    }
    | {("collections", n) for n in ("OrderedDict", "defaultdict", "deque", "Counter")}
)


def allowed_globals(returns: str | Iterable[type]) -> tuple[frozenset[tuple[str, str]], bool]:
    """The allow-list and the "anything loaded" flag for a ``returns=`` option."""

    if returns == "data":
        return DATA_GLOBALS, False
    if returns == "objects":
        return DATA_GLOBALS, True
    if isinstance(returns, str):
        raise PartialModeError(
            f"returns= must be 'data', 'objects' or a list of classes: {returns!r}"
        )
    extra = set()
    for cls in returns:
        if not isinstance(cls, type):
            raise PartialModeError(f"returns= lists classes, not {cls!r}")
        extra.add((cls.__module__, cls.__qualname__))
    return DATA_GLOBALS | frozenset(extra), False


def loads_result(
    data: bytes,
    allowed: frozenset[tuple[str, str]],
    anything: bool,
    limit: int = 64 << 20,
) -> Any:
    """Decode a result (``UnsafeResultError`` for anything outside the allow-list, or larger
    than ``limit`` bytes once decoded, every reference counted: ``partial.decode``)."""

    return _decode(data, allowed, anything, limit)


# -- exceptions ------------------------------------------------------------------------------------

#: Most frames of a sandboxed traceback shown, and longest text of each field.
MAX_FRAMES = 64
MAX_FIELD = 1000
#: Longest message of a rebuilt exception and of the chain's entries.
MAX_MESSAGE = 16 << 10


def _text(value: Any, most: int = MAX_FIELD) -> str:
    """``value`` as one bounded line of text (a record's field: never trusted to be short)."""

    text = value if type(value) is str else repr(value) if type(value) in (int, bool) else ""
    text = text if len(text) <= most else text[:most] + "..."
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def format_frames(frames: Any) -> str:
    """The sandboxed traceback, from the worker's own text only: each frame's file, line and
    function, and the source line the worker sent (bounded). Nothing is read here: a frame
    names a file of the worker's choosing (``/etc/shadow``, ``/dev/stdin``, ``/dev/zero``)."""

    lines = ["Traceback in the sandbox (most recent call last):"]
    if type(frames) is not list:
        return lines[0]
    if len(frames) > MAX_FRAMES:
        lines.append(f"  ... {len(frames) - MAX_FRAMES} frames left out")
        frames = frames[-MAX_FRAMES:]
    for frame in frames:
        if type(frame) is not list or len(frame) < 3:
            continue
        filename, lineno, name = frame[0], frame[1], frame[2]
        lines.append(f'  File "{_text(filename)}", line {_text(lineno)}, in {_text(name)}')
        source = _text(frame[3]).strip() if len(frame) > 3 else ""
        if source:
            lines.append(f"    {source}")
    return "\n".join(lines)


def _denial(fields: Any) -> Denial | None:
    if type(fields) is not dict:
        return None
    try:
        return Denial(**{k: fields.get(k) for k in Denial._fields if k in fields})  # type: ignore[arg-type]
    except TypeError:
        return None


def _find_exception_class(module: str, qualname: str) -> type[BaseException] | None:
    target: Any = sys.modules.get(module)  # never imported on the worker's word
    if target is None:
        return None
    for part in qualname.split(".")[:8]:
        # the namespace itself: no module __getattr__ (a lazy import) runs on the worker's word
        namespace = getattr(target, "__dict__", None)
        target = namespace.get(part) if namespace is not None else None
        if target is None:
            return None
    if isinstance(target, type) and issubclass(target, BaseException):
        return target
    return None


#: Partial mode's own errors describe what happened *here* (a timeout, a death, a refused
#: result): a record naming one is the worker's forgery, rebuilt as ``SandboxedError``.
_HOST_SIDE = frozenset(
    {
        "PartialModeError",
        "WorkerDiedError",
        "CallTimeoutError",
        "CallCancelledError",
        "RestartBudgetExceeded",
        "ResultTooLargeError",
        "UnsafeResultError",
        "SandboxedError",
    }
)


def _own_class(cls: type[BaseException]) -> bool:
    """Whether the host raises ``cls`` itself for a record naming it: an ``Exception`` (a host's
    ``except Exception`` catches it), never a ``BaseException`` that is not one --
    ``KeyboardInterrupt``, ``SystemExit``, ``GeneratorExit``, ``asyncio.CancelledError`` (which
    would cancel the host's task) or a tool's own -- nor one of partial mode's host-side errors."""

    if not issubclass(cls, Exception):
        return False
    return not (cls.__module__ == "pysandboxes.partial.errors" and cls.__name__ in _HOST_SIDE)


def rebuild_error(record: dict[str, Any], function_name: str) -> BaseException:
    """The exception of an error record (see the module docstring): always an ``Exception``;
    a class the host does not have, or may not raise on the worker's word, is
    :class:`SandboxedError` naming it (``remote_type``)."""

    from pysandboxes.partial.errors import ResultTooLargeError

    if record.get("too_big"):
        return ResultTooLargeError(
            f"{function_name}: the result ({_text(record['too_big'])} bytes pickled) is larger "
            f"than the limit (max_result={_text(record.get('limit'))}); the worker sent none of it"
        )
    module, qualname = _text(record.get("module", "")), _text(record.get("qualname", ""))
    message = _text(record.get("message", ""), MAX_MESSAGE)
    denials = [d for d in (_denial(f) for f in _list(record.get("denials"))) if d is not None]
    cls = _find_exception_class(module, qualname)
    exc: BaseException | None = None
    if cls is not None and _own_class(cls):
        exc = _construct(cls, record, message, denials)
    if exc is None:
        exc = SandboxedError(f"{module}.{qualname}: {message}", remote_type=f"{module}.{qualname}")
        if denials:
            exc.denial = denials[0]
    # Every refusal of the sandboxed chain stays visible to sandbox_denials().
    known = set()
    if isinstance(exc, SandBoxError) and exc.denial is not None:
        known.add(exc.denial)
    tail: BaseException = exc
    for denial in denials[:MAX_FRAMES]:
        if denial in known:
            continue
        known.add(denial)
        link = SandboxedError(f"refused in the sandbox: {_text(denial.target)}", denial=denial)
        tail.__context__ = link
        tail = link
    text = format_frames(record.get("frames") or [])
    chain = [c for c in _list(record.get("chain"))[:8] if type(c) is list and len(c) == 2]
    if chain:
        text += "\n" + "\n".join(f"  caused by {_text(n)}: {_text(m)}" for n, m in chain)
    try:
        exc.remote_traceback = text  # type: ignore[attr-defined]
        exc.add_note(text)
    except (AttributeError, TypeError):
        pass
    return exc


def _list(value: Any) -> list[Any]:
    return value if type(value) is list else []


def _construct(
    cls: type[BaseException], record: dict[str, Any], message: str, denials: list[Denial]
) -> BaseException | None:
    denial = denials[0] if denials else None
    try:
        if issubclass(cls, SandBoxError) and issubclass(cls, OSError):
            try:
                exc: BaseException = cls(message, denial=denial, filename=record.get("filename"))  # type: ignore[call-arg]
            except TypeError:  # RuleConnectionRefusedError takes no file name
                exc = cls(message, denial=denial)  # type: ignore[call-arg]
        elif issubclass(cls, SandBoxError) and issubclass(cls, ImportError):
            exc = cls(message, denial=denial)  # type: ignore[call-arg]
        elif issubclass(cls, OSError) and record.get("errno") is not None:
            exc = cls(record["errno"], record.get("strerror") or message, record.get("filename"))
        else:
            exc = cls(*_list(record.get("args")))
            if issubclass(cls, SandBoxError) and denial is not None:
                exc.denial = denial  # type: ignore[attr-defined]
    except Exception:
        return None
    return exc
