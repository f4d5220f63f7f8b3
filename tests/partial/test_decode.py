"""The host's decoder (partial/decode.py) on crafted bytes: bounded cost, checked builders,
every reference counted, error records node-bounded, tracebacks from the worker's text only,
and foreign or base exceptions converted (issue 25, classes 1 to 4).

In-process: the decoding is the thing under test (tests/redteam/wayback/partial runs the same
attacks through real workers under every provider)."""

from __future__ import annotations

import asyncio
import pickle
from collections import deque
from fractions import Fraction
from typing import Any

import pytest

from pysandboxes.partial import decode
from pysandboxes.partial.errors import SandboxedError, UnsafeResultError
from pysandboxes.partial.results import allowed_globals, loads_result, rebuild_error

DATA, ANYTHING = allowed_globals("data")
GLOBAL = b"\x8c\x0bcollections\x8c\x05deque\x93\x94"  # collections.deque, memo 0


def _load(data: bytes, limit: int = 64 << 20) -> Any:
    return loads_result(data, DATA, ANYTHING, limit)


def nested_deques(depth: int) -> bytes:
    """deque([deque([... deque([None])])]) ``depth`` deep, without recursion to make it."""

    return b"\x80\x05" + GLOBAL + b"h\x00]" * depth + b"N" + b"a\x85R" * depth + b"."


def test_deep_deques_are_refused_and_freed_without_recursion() -> None:
    assert _load(nested_deques(3)) == deque([deque([deque([None])])])
    with pytest.raises(UnsafeResultError, match="deeper"):
        _load(nested_deques(200_000))


def test_deep_slices_are_refused() -> None:
    inner = pickle.dumps(slice(1, 2), 5)
    assert _load(inner) == slice(1, 2)
    crafted = b"\x80\x05\x8c\x08builtins\x8c\x05slice\x93\x94" + b"h\x00" * 50 + b"N"
    crafted += b"NN\x87R" * 50 + b"."  # slice(slice(...), None, None)
    with pytest.raises(UnsafeResultError, match="slice"):
        _load(crafted)


def test_bytearray_of_a_size_is_refused() -> None:
    crafted = b"\x80\x05\x8c\x08builtins\x8c\x09bytearray\x93J\x00\x00\x00\x40\x85R."
    with pytest.raises(UnsafeResultError, match="bytearray"):
        _load(crafted)
    assert _load(pickle.dumps(bytearray(b"ok"), 5)) == bytearray(b"ok")


def _fraction_of(args: bytes) -> bytes:
    return b"\x80\x05\x8c\x09fractions\x8c\x08Fraction\x93" + args + b"R."


def test_fractions_that_compute_are_refused() -> None:
    assert _load(pickle.dumps(Fraction(2, 6), 5)) == Fraction(1, 3)
    text = b"1e999999999"
    with pytest.raises(UnsafeResultError, match="Fraction"):
        _load(_fraction_of(b"\x8c" + bytes([len(text)]) + text + b"\x85"))
    huge = pickle.dumps((3**200_000, 3**199_999), 5)[2:-1]  # the tuple's opcodes
    with pytest.raises(UnsafeResultError, match="bits"):
        _load(_fraction_of(huge.removesuffix(b"\x94")))


def test_shared_references_count_as_what_they_expand_to() -> None:
    value = ["x" * 10**6] * 700
    data = pickle.dumps(value, 5)
    assert len(data) < 2 << 20
    assert len(str(pickle.loads(data))) > 700 * 10**6  # the control: plain pickle expands it
    with pytest.raises(UnsafeResultError, match="every reference counted"):
        _load(data)
    assert _load(pickle.dumps(["x" * 10] * 700, 5)) == ["x" * 10] * 700


def test_exponential_sharing_is_node_bounded() -> None:
    value: list[Any] = ["leaf"]
    for _ in range(60):
        value = [value, value]
    with pytest.raises(UnsafeResultError):
        _load(pickle.dumps(value, 5))
    record = {"module": "builtins", "qualname": "ValueError", "message": "m", "args": [value]}
    assert decode.decode_record(pickle.dumps(record, 5)) is None  # unreadable, not expanded


def test_a_memo_index_never_sizes_memory() -> None:
    # LONG_BINPUT 2**31 - 1: C's unpickler would size its memo for it (16 GB).
    crafted = b"\x80\x05]r\xff\xff\xff\x7f."
    assert _load(crafted) == []


def test_a_value_that_refers_to_itself_is_refused() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(UnsafeResultError):
        _load(pickle.dumps(cycle, 5))


def test_type_values_come_back_as_types() -> None:
    assert _load(pickle.dumps({"kind": int, "all": [str, frozenset]}, 5)) == {
        "kind": int,
        "all": [str, frozenset],
    }
    crafted = b"\x80\x05\x8c\x08builtins\x8c\x03int\x93\x8c\x03999\x85R."
    with pytest.raises(UnsafeResultError, match="calling"):
        _load(crafted)


def _record(**fields: Any) -> dict[str, Any]:
    record = {"module": "builtins", "qualname": "ValueError", "message": "m", "args": ["m"]}
    record.update(fields)
    return record


def test_tracebacks_show_only_the_workers_text(tmp_path: Any) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the host's secret\n")
    frames = [
        [str(secret), 1, "forged"],
        ["/dev/zero", 1, "zero"],
        ["/dev/stdin", 1, "stdin", "the worker's own line\x1b]52;c;AAAA\x07"],
    ]
    exc = rebuild_error(_record(frames=frames), "f")
    text = exc.remote_traceback  # type: ignore[attr-defined]
    assert "the host's secret" not in text
    assert "the worker's own line" in text
    assert "\x1b" not in text and "\x07" not in text


@pytest.mark.parametrize(
    ("module", "qualname"),
    [
        ("builtins", "BaseException"),
        ("builtins", "KeyboardInterrupt"),
        ("asyncio.exceptions", "CancelledError"),
        ("asyncio", "CancelledError"),
        (__name__, "ToolInterrupt"),
        ("pysandboxes.partial.errors", "CallTimeoutError"),
    ],
)
def test_foreign_and_base_exceptions_become_sandboxed_errors(module: str, qualname: str) -> None:
    assert asyncio.CancelledError  # loaded: the class would be found
    exc = rebuild_error(_record(module=module, qualname=qualname), "f")
    assert type(exc) is SandboxedError
    assert exc.remote_type == f"{module}.{qualname}"
    assert isinstance(exc, Exception)


class ToolInterrupt(BaseException):
    """A tool's own BaseException subclass (it would pass a host's ``except Exception``)."""


def test_record_integers_are_bounded() -> None:
    huge = _record(qualname="KeyError", args=[10**5000])
    assert decode.decode_record(pickle.dumps(huge, 5)) is None
    fine = decode.decode_record(pickle.dumps(_record(qualname="KeyError", args=[7]), 5))
    assert str(rebuild_error(fine, "f")) == "7"


class Slotted:
    __slots__ = ("items",)

    def __init__(self, items: Any) -> None:
        self.items = items

    def __eq__(self, other: object) -> bool:
        return type(other) is Slotted and other.items == self.items


def test_named_classes_get_their_data_types_back() -> None:
    names, anything = allowed_globals([Slotted])
    value = Slotted(deque([1, 2], 5))
    decoded = loads_result(pickle.dumps(value, 5), names, anything)
    assert decoded == value and type(decoded.items) is deque and decoded.items.maxlen == 5


def test_output_control_sequences_are_neutralised() -> None:
    from pysandboxes.partial.output import neutralise

    text = "ok\tline\n\x1b]52;c;QUJD\x07\x9b2J\r\x7f"
    assert neutralise(text) == "ok\tline\n\\x1b]52;c;QUJD\\x07\\x9b2J\\x0d\\x7f"


def test_the_python_unpicklers_operations_are_counted() -> None:
    # A PUT sends the reply to the pure-Python unpickler; then 20,000 operations for one value.
    bomb = b"\x80\x05Np0\n" + b"N0" * 10_000 + b"."
    assert loads_result(bomb, DATA, ANYTHING) is None  # within the default budget
    with pytest.raises(UnsafeResultError, match="pickle operations"):
        decode.decode(bomb, DATA, ANYTHING, decode.Limits(1 << 20, nodes=1000))


def _reference_bounded(data: bytes) -> bool:
    """What :func:`decode._memo_is_bounded` must answer, read by ``pickletools``' own parser."""

    import pickletools

    try:
        for op, arg, _ in pickletools.genops(data):
            if op.name in ("PUT", "LONG_BINPUT") and not (0 <= int(arg) < len(data)):
                return False
    except Exception:
        return False
    return True


TEXTS = ["plain", "pr" * 40, "p\n" * 30, "r\xff\x7f" * 50, "é" * 300, "x" * 70_000]
VALUES: list[Any] = [
    TEXTS,
    {text: [text.encode(), (text, 1.5)] for text in TEXTS[:4]},
    [b"r" * 300, bytearray(b"p" * 5), 2**70, -(2**40), 3.25, None, True],
    [[["pr"] * 3] * 3, {"p": {"r": "pr"}}],
]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("index", range(len(VALUES)))
def test_the_memo_scan_reads_replies_as_pickle_does(protocol: int, index: int) -> None:
    # Protocols 0 to 3 write PUT / BINPUT / LONG_BINPUT, 4 and 5 MEMOIZE; texts hold the bytes
    # "p" and "r", which the scan must step over as arguments. It agrees with pickletools.
    data = pickle.dumps(VALUES[index], protocol)
    assert decode._memo_is_bounded(data, 1 << 30) is _reference_bounded(data)
    if protocol >= 3:  # below, bytes are pickled through _codecs.encode: not a data type
        assert _load(data) == VALUES[index]


@pytest.mark.parametrize(
    "crafted",
    [
        b"\x80\x05]r\xff\xff\xff\x7f.",  # LONG_BINPUT 2**31 - 1
        b"\x80\x05]p99999999\n.",  # PUT far beyond the reply
        b"\x80\x05]p-1\n.",  # not a plain index
        b"\x80\x05]p 1\n.",
        b"\x80\x05\x8c\xffpr]r\xff\xff\xff\x7f.",  # a text whose length runs past the end
        b"\x80\x05T\xff\xff\xff\xff]r\xff\xff\xff\x7f.",  # BINSTRING of negative length
        b"\x80\x05]r\xff\xff",  # cut short
        b"\x80\x05]\xffr\x00\x00\x00\x00.",  # an opcode pickle does not have
        b"\x80\x05]p0\n",  # no STOP
    ],
)
def test_the_memo_scan_refuses_what_it_cannot_follow(crafted: bytes) -> None:
    assert decode._memo_is_bounded(crafted, 1 << 30) is False


def test_a_text_heavy_reply_takes_the_c_unpickler() -> None:
    value = [f"line {i}: a report with p and r in it" for i in range(2000)]
    data = pickle.dumps(value, 5)
    assert b"p" in data and b"r" in data
    unpickler = decode._unpickler(data, DATA, ANYTHING, decode.Limits(1 << 24))
    assert isinstance(unpickler, decode._CUnpickler)
    assert _load(data) == value


def test_the_memo_scan_counts_its_operations() -> None:
    # 20,000 one-byte opcodes after a PUT: over a budget of 1,000, the scan refuses as the
    # pure-Python unpickler would.
    bomb = b"\x80\x05Np0\n" + b"N0" * 10_000 + b"."
    with pytest.raises(UnsafeResultError, match="pickle operations"):
        decode._memo_is_bounded(bomb, 1000)
