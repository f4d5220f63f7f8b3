"""What the host admits from a worker's answer, fed the bytes a compromised worker could send
(``channel.loads_from_worker``, the restricted unpickler itself)."""

from __future__ import annotations

import collections
import fractions
import importlib.util
import os
import pickle
import statistics

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
