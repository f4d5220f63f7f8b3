"""The caller's side of what a worker sends back (partial/results.py): results are decoded as
data, whatever bytes a hostile worker writes, and exceptions are rebuilt from plain records.

These run in-process on crafted bytes: the decoding is the thing under test (the end-to-end
path through real workers is tests/e2e/test_partial.py)."""

from __future__ import annotations

import datetime
import decimal
import pickle
import uuid
from collections import Counter, OrderedDict, defaultdict, deque
from fractions import Fraction
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from pysandboxes import sandbox_denials
from pysandboxes.errors import RuleConnectionRefusedError, RulePermissionError
from pysandboxes.partial.errors import SandboxedError, UnsafeResultError
from pysandboxes.partial.results import allowed_globals, loads_result, rebuild_error


class Runs:
    """Records that a hostile pickle ran code here (the control)."""

    ran: list[str] = []

    def __init__(self, text: str = "") -> None:
        if text:
            Runs.ran.append(text)


def mark(text: str) -> str:
    Runs.ran.append(text)
    return text


def _data(value: Any) -> Any:
    names, anything = allowed_globals("data")
    return loads_result(pickle.dumps(value, 5), names, anything)


def test_data_types_round_trip() -> None:
    value = {
        "n": [1, 2.5, 3j, None, True, b"x", bytearray(b"y")],
        "s": {1, 2},
        "f": frozenset({3}),
        "when": datetime.datetime(2026, 12, 1, 3, 0, tzinfo=datetime.UTC),
        "d": decimal.Decimal("1.25"),
        "q": Fraction(1, 3),
        "u": uuid.UUID(int=7),
        "p": [PurePosixPath("/a"), Path("/b")],
        "c": [OrderedDict(a=1), defaultdict(list, b=[1]), deque([1]), Counter("aab")],
        "r": range(3),
        "sl": slice(1, 2),
    }
    assert _data(value) == value


# Each hostile pickle calls Runs.mark through one of the opcodes that name a global.
_HERE = __name__.encode()
HOSTILE = {
    "GLOBAL protocol 0": b"c" + _HERE + b"\nmark\n(S'x'\ntR.",
    "STACK_GLOBAL": pickle.dumps(mark, 5)[:-1] + b"(X\x01\x00\x00\x00xtR.",
    "INST": b"(S'x'\ni" + _HERE + b"\nRuns\n.",
    "os.system": b"cposix\nsystem\n(S'true'\ntR.",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_pickles_run_nothing(name: str) -> None:
    data = HOSTILE[name]
    Runs.ran.clear()
    if name != "os.system":
        pickle.loads(data)  # the control: plain pickle runs code from these bytes
        assert Runs.ran, f"control failed for {name}"
        Runs.ran.clear()
    names, anything = allowed_globals("data")
    with pytest.raises(UnsafeResultError):
        loads_result(data, names, anything)
    assert Runs.ran == []


def test_named_classes_are_accepted_and_objects_never_import() -> None:
    names, anything = allowed_globals([Runs])
    assert isinstance(loads_result(pickle.dumps(Runs(), 5), names, anything), Runs)
    names, anything = allowed_globals("objects")
    unknown = b"\x80\x05\x8c\x0fnot_a_module_xy\x94\x8c\x01f\x94\x93\x94."
    with pytest.raises(UnsafeResultError, match="not loaded here"):
        loads_result(unknown, names, anything)


def test_exception_rebuilt_with_its_class_and_refusal() -> None:
    record = {
        "module": "pysandboxes.errors",
        "qualname": "RulePermissionError",
        "message": "Read access to 'x' DENIED",
        "args": [],
        "errno": 13,
        "strerror": "Read access to 'x' DENIED",
        "filename": "/x",
        "frames": [["/nowhere.py", 3, "tool"]],
        "denials": [{"kind": "file", "target": "/x", "suggestion": "expose-ro=/x"}],
        "chain": [],
    }
    exc = rebuild_error(record, "tool")
    assert type(exc) is RulePermissionError
    assert [(d.kind, d.target) for d in sandbox_denials(exc)] == [("file", "/x")]
    assert 'File "/nowhere.py", line 3, in tool' in exc.remote_traceback  # type: ignore[attr-defined]


def test_unknown_class_falls_back_and_keeps_every_refusal() -> None:
    record = {
        "module": "urllib.error_not_loaded",
        "qualname": "URLError",
        "message": "refused",
        "args": ["refused"],
        "frames": [],
        "denials": [
            {"kind": "net", "target": "[10.0.0.1]:80", "rule": "net=DENY|*|10.0.0.0/8|*|OUT"},
            {"kind": "file", "target": "/etc/x"},
        ],
        "chain": [["pysandboxes.errors.RuleConnectionRefusedError", "DENIED"]],
    }
    exc = rebuild_error(record, "fetch")
    assert isinstance(exc, SandboxedError)
    assert exc.remote_type == "urllib.error_not_loaded.URLError"
    assert [d.target for d in sandbox_denials(exc)] == ["[10.0.0.1]:80", "/etc/x"]


def test_a_record_cannot_make_the_caller_raise_system_exit() -> None:
    record = {"module": "builtins", "qualname": "SystemExit", "message": "0", "args": [0]}
    exc = rebuild_error(record, "tool")
    assert not isinstance(exc, SystemExit)
    assert isinstance(exc, SandboxedError)


def test_connection_refusal_rebuilt() -> None:
    record = {
        "module": "pysandboxes.errors",
        "qualname": "RuleConnectionRefusedError",
        "message": "Connection DENIED",
        "args": [],
        "errno": 111,
        "denials": [{"kind": "net", "target": "[1.2.3.4]:80"}],
    }
    exc = rebuild_error(record, "fetch")
    assert isinstance(exc, RuleConnectionRefusedError)
    assert sandbox_denials(exc)[0].target == "[1.2.3.4]:80"
