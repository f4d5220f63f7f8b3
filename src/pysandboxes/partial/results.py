"""What comes back from the worker, decoded as data: results and exceptions.

The worker runs code under the rules; what it sends back must not run code in the caller. A
pickle can name any global and call it (``os.system``), so results are decoded by
:class:`DataUnpickler`, whose ``find_class`` resolves only the types of an allow-list:

- by default (``returns="data"``): the builtin containers and scalars (which need no global at
  all), ``set``, ``frozenset``, ``bytearray``, ``complex``, ``slice``, ``range``, dates and times,
  ``Decimal``, ``Fraction``, ``UUID``, pure and concrete paths, ``OrderedDict``, ``defaultdict``,
  ``deque``, ``Counter``;
- plus the classes the caller names (``returns=[MyRecord, ...]``);
- or anything already imported in the caller (``returns="objects"``): plain ``pickle``
  semantics, for results from code the caller trusts as much as its own.

Exceptions come back as plain data (a pickle naming no global: ``partial.worker.error_record``),
decoded here with no global allowed, and are
rebuilt by :func:`rebuild_error` with their own class when the caller has it loaded, else as
:class:`~pysandboxes.partial.errors.SandboxedError`; the refusals of the chain are kept
(``sandbox_denials``) and the sandboxed traceback is attached as a note and as
``remote_traceback``.
"""

from __future__ import annotations

import io
import pickle
import sys

from pysandboxes.errors import Denial, SandBoxError
from pysandboxes.partial.errors import PartialModeError, SandboxedError, UnsafeResultError

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


#: Opcodes through which a pickle names a global (GLOBAL, INST, STACK_GLOBAL, EXT1/2/4).
_GLOBAL_OPCODES = (b"c", b"i", b"\x93", b"\x82", b"\x83", b"\x84")


def _fast_loads(data: bytes) -> Any:
    """``pickle.loads`` when no byte of ``data`` could be an opcode naming a global (small
    results only: the scan is cheap there), else the restricted unpickler."""

    if len(data) < 4096 and not any(op in data for op in _GLOBAL_OPCODES):
        return pickle.loads(data)
    return DataUnpickler(io.BytesIO(data), DATA_GLOBALS, False).load()


class DataUnpickler(pickle.Unpickler):
    """``pickle.Unpickler`` that resolves only allowed globals (see the module docstring)."""

    def __init__(self, file: Any, allowed: frozenset[tuple[str, str]], anything: bool) -> None:
        super().__init__(file)
        self.allowed = allowed
        self.anything = anything

    def find_class(self, module: str, name: str) -> Any:
        if self.anything:
            if module not in sys.modules:  # never an import on the worker's word
                raise UnsafeResultError(f"the result names {module}.{name}, not loaded here")
            return super().find_class(module, name)
        if (module, name) not in self.allowed:
            raise UnsafeResultError(
                f"the result names {module}.{name}, which is not a data type: refused (name "
                "its class in returns=[...], or pass returns='objects', to accept it)"
            )
        target: Any = sys.modules.get(module)
        if target is None:
            __import__(module)  # a standard-library module of the allow-list
            target = sys.modules[module]
        for part in name.split("."):
            target = getattr(target, part)
        return target


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


def loads_result(data: bytes, allowed: frozenset[tuple[str, str]], anything: bool) -> Any:
    """Decode a result (``UnsafeResultError`` for anything outside the allow-list)."""

    try:
        if allowed is DATA_GLOBALS and not anything:
            return _fast_loads(data)
        return DataUnpickler(io.BytesIO(data), allowed, anything).load()
    except UnsafeResultError:
        raise
    except Exception as exc:
        raise UnsafeResultError(f"the result cannot be decoded: {exc}") from None


# -- exceptions ------------------------------------------------------------------------------------


def format_frames(frames: list[list[Any]]) -> str:
    """The sandboxed traceback, with source lines read here (the code is the caller's)."""

    import linecache

    lines = ["Traceback in the sandbox (most recent call last):"]
    for filename, lineno, name in frames:
        lines.append(f'  File "{filename}", line {lineno}, in {name}')
        text = linecache.getline(str(filename), int(lineno)).strip()
        if text:
            lines.append(f"    {text}")
    return "\n".join(lines)


def _denial(fields: dict[str, Any]) -> Denial | None:
    try:
        return Denial(**{k: fields.get(k) for k in Denial._fields if k in fields})  # type: ignore[arg-type]
    except TypeError:
        return None


def _find_exception_class(module: str, qualname: str) -> type[BaseException] | None:
    target: Any = sys.modules.get(module)  # never imported on the worker's word
    if target is None:
        return None
    for part in qualname.split("."):
        target = getattr(target, part, None)
        if target is None:
            return None
    if isinstance(target, type) and issubclass(target, BaseException):
        return target
    return None


def rebuild_error(record: dict[str, Any], function_name: str) -> BaseException:
    """The exception of an error record (see the module docstring)."""

    from pysandboxes.partial.errors import ResultTooLargeError

    if record.get("too_big"):
        return ResultTooLargeError(
            f"{function_name}: the result ({record['too_big']} bytes pickled) is larger than the "
            f"limit (max_result={record.get('limit')}); the worker sent none of it"
        )
    module, qualname = str(record.get("module", "")), str(record.get("qualname", ""))
    message = str(record.get("message", ""))
    denials = [d for d in (_denial(f) for f in record.get("denials", [])) if d is not None]
    cls = _find_exception_class(module, qualname)
    exc: BaseException | None = None
    if cls is not None and not issubclass(cls, (SystemExit, KeyboardInterrupt, GeneratorExit)):
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
    for denial in denials:
        if denial in known:
            continue
        known.add(denial)
        link = SandboxedError(f"refused in the sandbox: {denial.target}", denial=denial)
        tail.__context__ = link
        tail = link
    frames = record.get("frames") or []
    text = format_frames(frames)
    chain = record.get("chain") or []
    if chain:
        text += "\n" + "\n".join(f"  caused by {name}: {msg}" for name, msg in chain)
    try:
        exc.remote_traceback = text  # type: ignore[attr-defined]
        exc.add_note(text)
    except (AttributeError, TypeError):
        pass
    return exc


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
            exc = cls(*record.get("args", []))
            if issubclass(cls, SandBoxError) and denial is not None:
                exc.denial = denial  # type: ignore[attr-defined]
    except Exception:
        return None
    return exc
