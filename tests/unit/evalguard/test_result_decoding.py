"""What the host admits from a worker's answer, fed the bytes a compromised worker could send
(``channel.loads_from_worker``, the restricted unpickler itself)."""

from __future__ import annotations

import collections
import fractions
import importlib
import importlib.util
import os
import pickle
import statistics
import sys

import pytest

from pysandboxes.errors import EvalWorkerError
from pysandboxes.evalguard import channel
from pysandboxes.evalguard.api import resolve
from tests.helpers import require

RULES = ["eval-syntax=arith", "eval-import=statistics,fractions,collections"]


def _decode(value: object) -> object:
    return channel.loads_from_worker(pickle.dumps(value, 5), resolve(None, RULES))


def test_data_and_classes_of_granted_modules_cross() -> None:
    assert _decode([1, {"a": fractions.Fraction(1, 3)}]) == [1, {"a": fractions.Fraction(1, 3)}]
    dist = statistics.NormalDist(1.0, 2.0)
    assert _decode(dist) == dist


@pytest.mark.parametrize(
    "value",
    [
        os.system,  # a function of a module nobody granted
        statistics.mean,  # a function of a granted module: functions never cross
        statistics.StatisticsError,  # an exception class
        collections._Link,  # a _private class of a granted module
        pickle.Unpickler,  # a class of a module not granted
    ],
)
def test_everything_else_is_refused(value: object) -> None:
    with pytest.raises(EvalWorkerError, match="cannot cross back"):
        _decode(value)


def test_a_metaclass_of_a_granted_module_is_refused() -> None:
    require(importlib.util.find_spec("sympy"), "sympy is not installed (pip install -e .[dev])")
    import sympy
    from sympy.core.function import FunctionClass

    rules = resolve(None, ["eval-syntax=arith", "eval-import=sympy"])
    x = sympy.Symbol("x")
    assert channel.loads_from_worker(pickle.dumps(sympy.sin(x), 5), rules) == sympy.sin(x)
    with pytest.raises(EvalWorkerError, match="cannot cross back"):
        channel.loads_from_worker(pickle.dumps(FunctionClass, 5), rules)


def test_a_persistent_reference_is_refused() -> None:
    class Refs(pickle.Pickler):
        def persistent_id(self, obj: object) -> object:
            return ("h", 0, "f") if obj == "ref" else None

    import io

    buffer = io.BytesIO()
    Refs(buffer, 5).dump(["ref"])
    with pytest.raises(EvalWorkerError, match="host object"):
        channel.loads_from_worker(buffer.getvalue(), resolve(None, RULES))


def _sympy_rules() -> object:
    require(importlib.util.find_spec("sympy"), "sympy is not installed (pip install -e .[dev])")
    return resolve(None, ["eval-syntax=arith", "eval-import=sympy"])


def test_a_class_is_resolved_by_its_own_name_never_through_an_imported_module() -> None:
    rules = _sympy_rules()
    importlib.import_module("sympy.printing.gtk")  # imports subprocess: gtk.subprocess.Popen

    payload = (
        b"\x80\x04csympy.printing.gtk\nsubprocess.Popen\n"
        b"(X\x05\x00\x00\x00falset\x85R."  # Popen(('false',)): a command run by the host
    )

    # Control: a plain unpickler resolves that name to the class that runs a command.
    class Names(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> object:
            if module.startswith("sympy"):
                target: object = sys.modules[module]
                for part in name.split("."):
                    target = getattr(target, part)
                return target
            raise pickle.UnpicklingError(name)

    import io
    import subprocess

    assert (
        Names(io.BytesIO(payload)).find_class("sympy.printing.gtk", "subprocess.Popen")
        is subprocess.Popen
    )
    with pytest.raises(EvalWorkerError, match="cannot cross back"):
        channel.loads_from_worker(payload, rules)  # type: ignore[arg-type]


def test_a_sympy_result_is_rebuilt_unevaluated() -> None:
    rules = _sympy_rules()
    import time

    import sympy

    # Control: a plain round trip evaluates 10**(10**10) in the decoding process (the
    # attack of tests/redteam/eval/corpus.py 'sympy_unevaluated_result', run in a child).
    big = sympy.Pow(10, 10**10, evaluate=False)
    start = time.monotonic()
    back = channel.loads_from_worker(pickle.dumps(big, 5), rules)  # type: ignore[arg-type]
    assert time.monotonic() - start < 5
    assert back == big and isinstance(back, sympy.Pow)
    x = sympy.Symbol("x")
    expr = sympy.integrate(sympy.sin(x) ** 2, x)
    assert channel.loads_from_worker(pickle.dumps(expr, 5), rules) == expr  # type: ignore[arg-type]
    # the host's own sympy evaluates as before afterwards
    assert sympy.Pow(2, 3) == 8


def test_a_librarys_sys_exit_does_not_end_the_host() -> None:
    from pysandboxes.errors import RuleEvalError
    from pysandboxes.evalguard.api import guarded_eval
    from tests.unit.evalguard import exiting_library

    # Control: called directly, the library ends the process.
    with pytest.raises(SystemExit):
        exiting_library.give_up(3)
    rules = ["eval-syntax=arith,import", "eval-import=tests.unit.evalguard.exiting_library"]
    source = "from tests.unit.evalguard.exiting_library import give_up\ngive_up(3)"
    with pytest.raises(RuleEvalError, match="tried to end the process"):
        guarded_eval(source, mode="exec", rules=rules, backend="in-process")

    # A host function's own SystemExit is the host's: it goes on as raised (sys.exit is the
    # host function here: a function of this test module would count as the granted
    # package's, tests.*).
    with pytest.raises(SystemExit) as info:
        guarded_eval("leave(4)", names={"leave": sys.exit}, rules=rules, backend="in-process")
    assert info.value.code == 4


def test_bytes_that_look_like_naming_opcodes_are_data() -> None:
    """A name ``i`` (INST's byte), a string holding STACK_GLOBAL's or EXT's byte: data, which
    the quick decoder reads as itself (it asks the opcodes, not the bytes)."""

    value = {"i": 999, "c": "\x93\x82P", "Q": b"\x84i", "n": [1, (2, 3.5)]}
    assert _decode(value) == value


def test_a_global_among_no_memo_bytes_is_refused() -> None:
    """``os.system('id')`` has no ``p`` or ``r`` byte, so the quick decoder reads it first:
    it stops at the global and the restricted decoder refuses it. Control: an unpickler that
    resolves names finds the function that runs a command."""

    payload = b"\x80\x04cos\nsystem\nX\x02\x00\x00\x00id\x85R."
    assert b"p" not in payload and b"r" not in payload
    import io

    assert pickle.Unpickler(io.BytesIO(payload)).find_class("os", "system") is os.system
    with pytest.raises(EvalWorkerError, match="cannot cross back"):
        channel.loads_from_worker(payload, resolve(None, RULES))
    with pytest.raises(EvalWorkerError):  # an extension code (none is registered)
        channel.loads_from_worker(b"\x80\x04\x82\x01.", resolve(None, RULES))
