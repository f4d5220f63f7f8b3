"""The host's decoder for everything a worker sends back: results and error records.

A worker runs code steered by whatever a model read, and it may write any bytes on its socket
(a function can reach the worker's socket). So the host treats each byte as hostile input (issue
25): decoding has a bounded cost and builds only data, whatever the bytes.

- **No constructor computes with the worker's arguments.** ``find_class`` never hands the
  unpickler a data type itself: it hands a *checked builder* that accepts only the arguments
  ``pickle.dumps`` makes for that type, bounded (``slice``/``range``/``complex`` of numbers,
  ``bytearray`` of bytes -- never ``bytearray(N)`` --, a ``Fraction`` of two numbers of at most
  :data:`MAX_FRACTION_BITS` bits or a plain ``"n/d"`` string -- never ``"1e999999999"`` --, a
  ``Decimal`` of a string, dates from their own state...), and refuses the rest. A type sent as a
  value (``{"kind": int}``) is that type again once the result is checked.
- **Bounded memory while decoding.** C's unpickler sizes its memo to the largest index a ``PUT``
  names (a 10-byte pickle can make it touch gigabytes): a pickle holding a ``PUT``/``LONG_BINPUT``
  byte is decoded by the pure-Python unpickler, whose memo is a dict and whose operations are
  counted (at most :data:`OPS_PER_NODE` per node of the budget). Everything else a pickle builds
  costs at most a constant times its own bytes.
- **Bounded size, counted as the host will see it.** :func:`check` walks the decoded value once,
  *counting every reference* (a list of 700 references to one 1 MB string is 700 MB, as printing
  or comparing it would make it), and refuses it past :class:`Limits`: depth, nodes, decoded
  bytes (the call's ``max_result``) and seconds. A value that refers to itself is too deep.
- **Types whose deallocation recurses** (``deque``, ``defaultdict``, ``slice`` of slices) are never
  built before the check: they are decoded as lists and dicts (freed iteratively by CPython) and
  made real only once the depth is known to be small.

Error records (``partial.worker.error_record``) are decoded with no global at all and checked as
*plain* data (dicts with ``str`` keys, lists, tuples, ``str``, ``bytes``, ``int`` of at most
:data:`MAX_RECORD_INT_BITS` bits, ``float``, ``bool``, ``None``) by the same node-bounded walk.
"""

from __future__ import annotations

import io
import pickle
import re
import sys
import time

from pysandboxes.partial.errors import UnsafeResultError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: Deepest nesting of a decoded value (a value that refers to itself is infinitely deep).
MAX_DEPTH = 200
#: Fewest nodes a result may always have (each reference counted); the budget grows with
#: ``max_result`` (one node per 16 bytes).
MIN_NODES = 1 << 20
#: Pickle operations a value may take to decode, per node of its budget (a data value takes
#: one to three per node).
OPS_PER_NODE = 4
#: Seconds the check of one decoded value may take.
MAX_SECONDS = 10.0
#: Largest numerator or denominator of a ``Fraction`` that crosses back (bits): its gcd is cheap.
MAX_FRACTION_BITS = 1 << 14
#: Longest text a ``Fraction``, ``Decimal`` or path is built from.
MAX_NUMBER_TEXT = 1 << 16
#: Largest ``int`` in an error record (bits): ``str()`` of it never fails in the host's handler.
MAX_RECORD_INT_BITS = 4096
#: Budget of an error record: nodes and decoded bytes.
RECORD_NODES = 1 << 16
RECORD_BYTES = 1 << 20


class Limits:
    """What one decoded value may cost: depth, nodes (every reference counted), decoded bytes
    (a container counts 8 bytes an item -- 16 for a dict or a set --, text and bytes their
    length, an ``int`` its bytes, any other value 8) and seconds."""

    __slots__ = ("depth", "nodes", "seconds", "size")

    def __init__(
        self,
        size: int,
        *,
        nodes: int | None = None,
        depth: int = MAX_DEPTH,
        seconds: float = MAX_SECONDS,
    ) -> None:
        self.size = size
        self.nodes = nodes if nodes is not None else max(MIN_NODES, size // 16)
        self.depth = depth
        self.seconds = seconds


# -- checked builders ------------------------------------------------------------------------------

_NUMBERS = (int, float, bool)


def _refuse(what: str) -> UnsafeResultError:
    return UnsafeResultError(
        f"the result builds {what}: refused (not what a data value pickles as)"
    )


class _TypeRef:
    """A data type named by the pickle: called (``REDUCE``), it builds through its checked
    builder; left as a value, it becomes the type itself once the result is checked."""

    __slots__ = ("build", "target")

    def __init__(self, target: Any, build: Callable[..., Any] | None) -> None:
        self.target = target
        self.build = build

    def __call__(self, *args: Any) -> Any:
        if self.build is None:
            raise _refuse(f"a {_qualified(self.target)} by calling it")
        return self.build(*args)

    def __reduce__(self) -> Any:  # never pickled again by accident
        raise TypeError("a type reference of the decoder")


def _qualified(target: Any) -> str:
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', target)}"


class _DequeStub(list):  # type: ignore[type-arg]
    """A ``deque`` while decoding (a list: freed without recursion); made real after the check."""

    __slots__ = ("maxlen",)
    maxlen: int | None


class _DefaultDictStub(dict):  # type: ignore[type-arg]
    """A ``defaultdict`` while decoding; made real after the check."""

    __slots__ = ("factory",)
    factory: _TypeRef | None


class _SliceStub:
    """A ``slice`` of numbers (checked when built); made real after the check."""

    __slots__ = ("args",)

    def __init__(self, args: tuple[Any, ...]) -> None:
        self.args = args


def _only(kinds: tuple[type, ...], args: tuple[Any, ...], what: str, most: int = 3) -> None:
    if len(args) > most or any(type(a) not in kinds for a in args):
        raise _refuse(f"a {what} of {', '.join(type(a).__name__ for a in args) or 'nothing'}")


def _build_slice(*args: Any) -> _SliceStub:
    _only((int, bool, type(None)), args, "slice")
    return _SliceStub(args)


def _build_range(*args: Any) -> range:
    _only((int, bool), args, "range")
    return range(*args)


def _build_complex(*args: Any) -> complex:
    _only(_NUMBERS, args, "complex", 2)
    return complex(*args)


def _build_bytearray(*args: Any) -> bytearray:
    if not args:
        return bytearray()
    if type(args[0]) is bytes and len(args) == 1:
        return bytearray(args[0])
    if type(args[0]) is str and len(args) == 2 and type(args[1]) is str:
        return bytearray(args[0], "latin-1")  # protocol < 3: (text, 'latin-1')
    raise _refuse("a bytearray from a size or an iterable")


def _build_deque(items: Any = (), maxlen: Any = None, *rest: Any) -> _DequeStub:
    if rest or (maxlen is not None and (type(maxlen) is not int or maxlen < 0)):
        raise _refuse("a deque with such a length")
    if type(items) not in (list, tuple):
        raise _refuse("a deque from something else than a list")
    stub = _DequeStub(items)
    stub.maxlen = maxlen
    return stub


def _build_defaultdict(factory: Any = None, *rest: Any) -> _DefaultDictStub:
    if rest or not (
        factory is None or (type(factory) is _TypeRef and type(factory.target) is type)
    ):
        raise _refuse("a defaultdict whose factory is not a data type")
    stub = _DefaultDictStub()
    stub.factory = factory
    return stub


def _build_counter(*args: Any) -> Any:
    from collections import Counter

    if len(args) > 1 or (args and type(args[0]) is not dict):
        raise _refuse("a Counter from something else than a dict")
    counter: Counter[Any] = Counter()
    if args:
        dict.update(counter, args[0])  # no counting: the values are the counts
    return counter


def _build_ordered_dict(*args: Any) -> Any:
    from collections import OrderedDict

    if args and not (len(args) == 1 and type(args[0]) in (list, tuple) and not args[0]):
        raise _refuse("an OrderedDict from arguments")
    return OrderedDict()


def _build_fraction(*args: Any) -> Any:
    from fractions import Fraction

    if len(args) == 1 and type(args[0]) is str:
        text = args[0].strip()
        numerator, _slash, denominator = text.partition("/")
        digits = numerator.removeprefix("-").removeprefix("+")
        if (
            len(text) > 2 * 4300
            or not digits.isascii()
            or not digits.isdigit()
            or (_slash and not (denominator.isascii() and denominator.isdigit()))
        ):
            raise _refuse("a Fraction from text that is not 'n/d'")
        args = (int(numerator), int(denominator) if _slash else 1)
    if len(args) not in (1, 2) or any(type(a) not in (int, bool) for a in args):
        raise _refuse("a Fraction of something else than two integers")
    if any(abs(a).bit_length() > MAX_FRACTION_BITS for a in args):
        raise _refuse(f"a Fraction of integers larger than {MAX_FRACTION_BITS} bits")
    return Fraction(*args)


def _build_decimal(*args: Any) -> Any:
    from decimal import Decimal

    if len(args) != 1 or type(args[0]) is not str or len(args[0]) > MAX_NUMBER_TEXT:
        raise _refuse("a Decimal of something else than a short string")
    return Decimal(args[0])


def _texts(kind: type, what: str) -> Callable[..., Any]:
    def build(*args: Any) -> Any:
        if any(type(a) is not str for a in args) or sum(map(len, args)) > MAX_NUMBER_TEXT:
            raise _refuse(f"a {what} of something else than strings")
        return kind(*args)

    return build


def _datetime_builder(kind: type) -> Callable[..., Any]:
    import datetime

    def build(*args: Any) -> Any:
        # pickle's form: (state bytes[, tzinfo]); timedelta/timezone: small numbers.
        allowed = (bytes, int, bool, str, type(None), datetime.timezone, datetime.timedelta)
        for a in args:
            if type(a) not in allowed:
                raise _refuse(f"a {kind.__name__} of {type(a).__name__}")
        if len(args) > 8:
            raise _refuse(f"a {kind.__name__} of {len(args)} arguments")
        return kind(*args)

    return build


def _builders() -> dict[tuple[str, str], Callable[..., Any] | None]:
    """The checked builder of each data type (``None``: the type may be a value, never called)."""

    import datetime

    found: dict[tuple[str, str], Callable[..., Any] | None] = {
        ("builtins", name): None
        for name in ("set", "frozenset", "list", "dict", "tuple", "int", "float", "str", "bytes")
    }
    found |= {("builtins", "bool"): None}
    found |= {
        ("builtins", "slice"): _build_slice,
        ("builtins", "range"): _build_range,
        ("builtins", "complex"): _build_complex,
        ("builtins", "bytearray"): _build_bytearray,
        ("collections", "deque"): _build_deque,
        ("collections", "defaultdict"): _build_defaultdict,
        ("collections", "Counter"): _build_counter,
        ("collections", "OrderedDict"): _build_ordered_dict,
        ("fractions", "Fraction"): _build_fraction,
        ("decimal", "Decimal"): _build_decimal,
    }
    for name in ("date", "time", "datetime", "timedelta", "timezone"):
        found[("datetime", name)] = _datetime_builder(getattr(datetime, name))
    for name in ("PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath"):
        import pathlib

        found[("pathlib", name)] = _texts(getattr(pathlib, name), name)
    return found


_BUILDERS: dict[tuple[str, str], Callable[..., Any] | None] | None = None
#: Classes built by ``NEWOBJ`` then ``BUILD`` (their ``__setstate__`` only stores the state).
_STATE_CLASSES = {("uuid", "UUID"), ("uuid", "SafeUUID")}


def builder_for(module: str, name: str) -> Any:
    """What ``find_class`` hands the unpickler for the data type ``module.name``."""

    global _BUILDERS
    if _BUILDERS is None:
        _BUILDERS = _builders()
    if (module, name) in _STATE_CLASSES:
        import uuid

        return getattr(uuid, name)
    if (module, name) not in _BUILDERS:
        raise KeyError((module, name))
    target: Any = sys.modules.get(module)
    if target is None:
        __import__(module)  # a standard-library module of the data types
        target = sys.modules[module]
    return _TypeRef(getattr(target, name), _BUILDERS[(module, name)])


# -- the unpicklers --------------------------------------------------------------------------------


class _Resolving:
    """``find_class`` of both unpicklers: data types through their builders; the classes
    ``returns=[...]`` names; or (``returns='objects'``) any class already loaded here."""

    allowed: frozenset[tuple[str, str]]
    data: frozenset[tuple[str, str]]
    anything: bool

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in self.data:
            return builder_for(module, name)
        if self.anything:
            if module not in sys.modules:  # never an import on the worker's word
                raise UnsafeResultError(f"the result names {module}.{name}, not loaded here")
            return pickle.Unpickler.find_class(self, module, name)  # type: ignore[arg-type]
        if (module, name) not in self.allowed:
            raise UnsafeResultError(
                f"the result names {module}.{name}, which is not a data type: refused (name "
                "its class in returns=[...], or pass returns='objects', to accept it)"
            )
        target: Any = sys.modules.get(module)
        if target is None:  # a class of returns=[...] is loaded: it was given as an object
            raise UnsafeResultError(f"the result names {module}.{name}, not loaded here")
        for part in name.split("."):
            target = getattr(target, part)
        return target

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafeResultError("the result names an object of the host (a persistent id)")


class _CUnpickler(_Resolving, pickle.Unpickler):
    pass


class _PyUnpickler(_Resolving, pickle._Unpickler):  # type: ignore[name-defined,misc]
    """The pure-Python unpickler, its opcodes counted: past :data:`OPS_PER_NODE` times the node
    budget it stops (a reply of 64 MB of one-byte opcodes would hold the GIL for a minute here;
    a count, not a clock, so that the same reply is refused on every machine)."""

    ops = 0
    most_ops = 0


def _counted(step: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def run(self: Any) -> Any:
        self.ops += 1
        if self.ops > self.most_ops:
            raise UnsafeResultError(
                f"the result takes more than {self.most_ops} pickle operations to decode"
            )
        return step(self)

    return run


_PyUnpickler.dispatch = {
    key: _counted(step)
    for key, step in pickle._Unpickler.dispatch.items()  # type: ignore[attr-defined]
}


#: How the scan of :func:`_memo_is_bounded` steps over each opcode's argument, by opcode byte:
#: ``(kind, width)``; kind 0 a fixed ``width`` bytes, 1 a little-endian length of ``width``
#: bytes then that many bytes, 2 ``width`` lines ended by a newline. Built once from
#: ``pickletools``' table of the protocol (the grammar C's unpickler reads).
_ARGUMENTS: dict[int, tuple[int, int]] | None = None


def _argument_table() -> dict[int, tuple[int, int]]:
    global _ARGUMENTS
    if _ARGUMENTS is None:
        import pickletools

        counted = {
            pickletools.TAKEN_FROM_ARGUMENT1: 1,
            pickletools.TAKEN_FROM_ARGUMENT4: 4,
            pickletools.TAKEN_FROM_ARGUMENT4U: 4,
            pickletools.TAKEN_FROM_ARGUMENT8U: 8,
        }
        table: dict[int, tuple[int, int]] = {}
        for op in pickletools.opcodes:
            arg = op.arg
            if arg is None:
                entry = (0, 0)
            elif arg.n >= 0:
                entry = (0, arg.n)
            elif arg.n == pickletools.UP_TO_NEWLINE:
                entry = (2, 2 if arg.name.endswith("_pair") else 1)
            else:
                entry = (1, counted[arg.n])
            table[ord(op.code.encode("latin-1"))] = entry
        _ARGUMENTS = table
    return _ARGUMENTS


def _memo_is_bounded(data: bytes, most_ops: int) -> bool:
    """Whether C's unpickler may decode ``data``: every ``PUT`` and ``LONG_BINPUT`` index it
    will read is below ``len(data)`` (so its memo is at most a few times the reply's size).

    The reply is walked opcode by opcode as the unpickler reads it, arguments stepped over, up
    to ``STOP``; a byte ``p`` or ``r`` inside a text is an argument, not an opcode (text-heavy
    replies, which hold those bytes, took the pure-Python unpickler, 17x slower, before this
    scan). Anything the scan does not follow to the letter (an unknown opcode, a negative or
    overlong length, a missing newline, an index that is not plain decimal) answers ``False``:
    the pure-Python unpickler then decodes it, or refuses it. At most ``most_ops`` opcodes are
    walked, the budget of the pure-Python unpickler, which refuses the same reply past it.
    """

    table = _argument_table()
    end = len(data)
    counted = end > most_ops  # every opcode takes a byte at least: a short reply cannot exceed
    at = 0
    ops = 0
    find = data.find
    while at < end:
        code = data[at]
        at += 1
        if counted:
            ops += 1
            if ops > most_ops:
                raise UnsafeResultError(
                    f"the result takes more than {most_ops} pickle operations to decode"
                )
        if code == 0x94:  # MEMOIZE, after every container and text: appends to the memo
            continue
        if code == 0x8C or code == 0x43:  # SHORT_BINUNICODE, SHORT_BINBYTES: length, bytes
            if at >= end:
                return False
            at += 1 + data[at]
            continue
        entry = table.get(code)
        if entry is None:
            return False
        kind, width = entry
        if kind == 0:
            if (
                code == 0x72
                and (  # LONG_BINPUT: a 4-byte index
                    at + 4 > end or int.from_bytes(data[at : at + 4], "little") >= end
                )
            ):
                return False
            at += width
        elif kind == 1:
            if at + width > end:
                return False
            signed = code == 0x54  # BINSTRING's length is signed (negative: C refuses)
            size = int.from_bytes(data[at : at + width], "little", signed=signed)
            if size < 0:
                return False
            at += width + size
        else:
            start = at
            for _ in range(width):
                newline = find(b"\n", at)
                if newline < 0:
                    return False
                at = newline + 1
            if code == 0x70:  # PUT: a decimal index on its line
                text = data[start : at - 1]
                if not text.isdigit() or len(text) > 18 or int(text) >= end:
                    return False
        if code == 0x2E:  # STOP: the unpickler reads no further
            return at <= end
    return False


def _unpickler(
    data: bytes, allowed: frozenset[tuple[str, str]], anything: bool, limits: Limits
) -> Any:
    from pysandboxes.partial.results import DATA_GLOBALS

    # PUT (b"p", a decimal index) and LONG_BINPUT (b"r", 4 bytes) make C's memo as long as the
    # index they name; the pure-Python unpickler keeps its memo in a dict. A reply holding those
    # bytes is scanned: only one whose indices are all small goes to C's unpickler.
    most_ops = OPS_PER_NODE * limits.nodes
    suspect = b"r" in data or b"p" in data
    kind = _PyUnpickler if suspect and not _memo_is_bounded(data, most_ops) else _CUnpickler
    unpickler = kind(io.BytesIO(data))
    if isinstance(unpickler, _PyUnpickler):
        unpickler.most_ops = most_ops
    unpickler.allowed = allowed
    unpickler.data = DATA_GLOBALS
    unpickler.anything = anything
    return unpickler


#: Opcodes through which a pickle names a global (GLOBAL, INST, STACK_GLOBAL, EXT1/2/4).
_GLOBAL_OPCODES = (b"c", b"i", b"\x93", b"\x82", b"\x83", b"\x84")
#: ... and PUT, LONG_BINPUT (see :func:`_unpickler`).
_UNSAFE_FOR_C = re.compile(b"[" + re.escape(b"".join((*_GLOBAL_OPCODES, b"p", b"r"))) + b"]")
_SCALARS = frozenset({type(None), bool, int, float, str, bytes})


def decode(
    data: bytes,
    allowed: frozenset[tuple[str, str]],
    anything: bool,
    limits: Limits | int,
) -> Any:
    """Decode a result from a worker (see the module docstring); ``UnsafeResultError`` for
    anything outside the allow-list or past ``limits`` (or ``Limits(limits)``)."""

    try:
        if len(data) < 4096 and _UNSAFE_FOR_C.search(data) is None:
            value = pickle.loads(data)  # names nothing, no memo index: the fast C path
            if type(value) in _SCALARS:
                return value
            if type(limits) is int:
                limits = Limits(limits)
            return _checked(value, limits, plain=False, fix=False)  # type: ignore[arg-type]
        if type(limits) is int:
            limits = Limits(limits)
        value = _unpickler(data, allowed, anything, limits).load()  # type: ignore[arg-type]
    except UnsafeResultError:
        raise
    except RecursionError:
        raise UnsafeResultError("the result cannot be decoded: nested too deep") from None
    except Exception as exc:
        raise UnsafeResultError(f"the result cannot be decoded: {exc}") from None
    if type(value) in _SCALARS:
        return value
    if type(limits) is int:
        limits = Limits(limits)
    try:
        return _checked(value, limits, plain=False, fix=True)  # type: ignore[arg-type]
    except RecursionError:
        raise UnsafeResultError("the result cannot be decoded: nested too deep") from None


def decode_plain(data: bytes, limits: Limits | None = None) -> Any:
    """Plain data (an error record, guarded evaluation's ``(output, record, retire)``): decoded
    with no global allowed, checked node-bounded (default: :data:`RECORD_BYTES`,
    :data:`RECORD_NODES`); ``UnsafeResultError`` when it is not plain or too large."""

    limits = limits or Limits(RECORD_BYTES, nodes=RECORD_NODES)
    try:
        value = _unpickler(data, frozenset(), False, limits).load()
    except UnsafeResultError:
        raise
    except RecursionError:
        raise UnsafeResultError("plain data nested too deep") from None
    except Exception as exc:
        raise UnsafeResultError(f"unreadable plain data: {exc}") from None
    return _checked(value, limits, plain=True, fix=False)


def decode_record(data: bytes) -> Any:
    """An error record (:func:`decode_plain`), or ``None`` when it is not one (the caller
    reports an unreadable record)."""

    try:
        return decode_plain(data)
    except UnsafeResultError:
        return None


def finish(value: Any, limits: Limits) -> Any:
    """A value another unpickler decoded with :func:`builder_for` as its data types (guarded
    evaluation's): checked as :func:`decode` checks its own, stubs made real."""

    if type(value) in _SCALARS:
        return value
    try:
        return _checked(value, limits, plain=False, fix=True)
    except RecursionError:
        raise UnsafeResultError("the result is nested too deep") from None


# -- the check -------------------------------------------------------------------------------------

_PLAIN_LEAVES = frozenset({str, bytes, int, float, bool, type(None)})
_STUBS = (_DequeStub, _DefaultDictStub, _SliceStub, _TypeRef)


def _checked(value: Any, limits: Limits, *, plain: bool, fix: bool) -> Any:
    """``value`` after the walk of :func:`check`, with its stubs made real (``fix``)."""

    stubs = check(value, limits, plain=plain)
    if stubs and fix:
        return _materialize(value, {})
    if stubs:  # the fast path builds no stub; a type reference would be one
        raise UnsafeResultError("the result holds a decoder's stub")
    return value


def check(value: Any, limits: Limits, *, plain: bool = False) -> bool:
    """Walk ``value`` counting every reference (see the module docstring); raise
    ``UnsafeResultError`` past ``limits``; return whether it holds stubs to make real."""

    nodes = size = 0
    budget_nodes, budget_size, most_deep = limits.nodes, limits.size, limits.depth
    deadline = time.monotonic() + limits.seconds
    stubs = False
    stack: list[tuple[Any, int]] = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        item, depth = pop()
        nodes += 1
        kind = type(item)
        if kind is str or kind is bytes or kind is bytearray:
            size += len(item)
        elif kind is int:
            bits = item.bit_length() if item >= 0 else (-item).bit_length()
            if plain and bits > MAX_RECORD_INT_BITS:
                raise UnsafeResultError("an error record holds an integer too large to print")
            size += bits // 8
        elif kind in _PLAIN_LEAVES:
            size += 8
        elif depth >= most_deep:
            raise UnsafeResultError(
                f"the result is nested deeper than {most_deep} (or refers to itself): refused"
            )
        elif kind is list or kind is tuple or kind is _DequeStub:
            size += 8 * len(item) + 8
            stubs = stubs or kind is _DequeStub
            if plain and kind is _DequeStub:
                raise UnsafeResultError("an error record that is not plain data")
            for element in item:
                push((element, depth + 1))
        elif kind is dict or (not plain and isinstance(item, dict)):
            size += 16 * len(item) + 8
            stubs = stubs or kind is _DefaultDictStub
            if kind is _DefaultDictStub:
                push((item.factory, depth + 1))
            for key, element in item.items():
                if plain and type(key) is not str:
                    raise UnsafeResultError("an error record that is not plain data")
                push((key, depth + 1))
                push((element, depth + 1))
        elif plain:
            raise UnsafeResultError(f"an error record holds a {kind.__name__}: not plain data")
        elif kind is set or kind is frozenset:
            size += 16 * len(item) + 8
            for element in item:
                push((element, depth + 1))
        elif kind is _SliceStub:
            stubs = True
            size += 64
        elif kind is _TypeRef:
            stubs = True
            size += 16
        else:
            size += 64
            state = getattr(item, "__dict__", None)  # a class of returns=[...] or 'objects'
            if type(state) is dict:
                push((state, depth + 1))
            for slot in _slots(kind):
                push((getattr(item, slot, None), depth + 1))
        if nodes > budget_nodes or size > budget_size:
            raise UnsafeResultError(
                f"the result, every reference counted, is larger than the limit ({nodes} nodes "
                f"> {budget_nodes} or {size} bytes > {budget_size} decoded): refused"
            )
        if not nodes & 0xFFFF and time.monotonic() > deadline:
            raise UnsafeResultError(f"the result took more than {limits.seconds:g} s to check")
    return stubs


def _slots(kind: type) -> list[str]:
    """The ``__slots__`` names of ``kind`` and its bases (a class of ``returns=[...]``)."""

    names: list[str] = []
    for base in kind.__mro__:
        slots = base.__dict__.get("__slots__", ())
        names.extend([slots] if isinstance(slots, str) else slots)
    return [n for n in names if n not in ("__dict__", "__weakref__")]


def _materialize(value: Any, done: dict[int, Any]) -> Any:
    """``value`` with each stub replaced by the real object (its depth is checked already);
    shared parts stay shared, lists and dicts are changed in place."""

    kind = type(value)
    if kind in _SCALARS:
        return value
    key = id(value)
    if key in done:
        return done[key]
    if kind is _TypeRef:
        result: Any = value.target
    elif kind is _SliceStub:
        result = slice(*value.args)
    elif kind is _DequeStub:
        from collections import deque

        result = deque([_materialize(v, done) for v in value], value.maxlen)
    elif kind is _DefaultDictStub:
        from collections import defaultdict

        factory = None if value.factory is None else value.factory.target
        result = defaultdict(
            factory, {_materialize(k, done): _materialize(v, done) for k, v in value.items()}
        )
    elif kind is list:
        done[key] = value
        for index, element in enumerate(value):
            value[index] = _materialize(element, done)
        return value
    elif isinstance(value, dict):
        done[key] = value
        items = [(_materialize(k, done), _materialize(v, done)) for k, v in value.items()]
        if any(type(k) is _TypeRef for k in value):
            value.clear()
        for k, v in items:
            value[k] = v
        return value
    elif kind is tuple:
        result = tuple(_materialize(v, done) for v in value)
    elif kind is set or kind is frozenset:
        result = kind(_materialize(v, done) for v in value)
    else:
        state = getattr(value, "__dict__", None)
        if type(state) is dict:
            _materialize(state, done)
        for slot in _slots(kind):
            old = getattr(value, slot, done)
            if old is not done:
                new = _materialize(old, done)
                if new is not old:  # (only a stub is replaced: a UUID is immutable)
                    setattr(value, slot, new)
        result = value
    done[key] = result
    return result
