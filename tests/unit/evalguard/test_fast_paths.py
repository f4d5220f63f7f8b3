"""The rewrite's inline int paths (no helper call for int arithmetic) keep every check: an
operand that is not a small int still goes through the checked helper, and an augmented
assignment evaluates its value once."""

from __future__ import annotations

import importlib.util
import time

import pytest

from pysandboxes.errors import EvalMemoryError
from pysandboxes.evalguard.api import guarded_eval

RULES = [
    "eval-syntax=arith,assign,loop,compare,conditional",
    "eval-call=range",
    "eval-max-alloc=1M",
]


@pytest.mark.parametrize("backend", ["in-process", None])
def test_inline_products_and_sums(backend: str | None) -> None:
    source = "t = 0\nfor i in range(10):\n    t += i * i\n    t += 2 * i\n    t %= 1000\n"
    assert guarded_eval(source, mode="exec", rules=RULES, backend=backend) == {"t": 375, "i": 9}


@pytest.mark.parametrize(
    ("source", "names"),
    [
        ("x * x", {"x": 2**200_000}),  # a big int: the helper's estimate (1/64 of 1M)
        ("x * y", {"x": 2**200_000, "y": 2**200_000}),
        ("s * 3", {"s": "a" * 500_000}),  # a string: the helper's estimate
        ("3 * s", {"s": "a" * 500_000}),
    ],
)
def test_what_is_not_a_small_int_is_still_checked(source: str, names: dict[str, object]) -> None:
    with pytest.raises(EvalMemoryError):
        guarded_eval(source, names=names, rules=RULES, backend="in-process")


def test_augmented_value_is_evaluated_once() -> None:
    calls: list[int] = []

    def bump() -> int:
        calls.append(1)
        return 5

    bound = guarded_eval(
        "t = 1\nt += bump() * 2\nu = 'a'\nu += 'b' * 2",
        names={"bump": bump},
        mode="exec",
        rules=RULES,
        backend="in-process",
    )
    assert bound == {"t": 11, "u": "abb"} and calls == [1]
    with pytest.raises(EvalMemoryError):  # a string grown by += through the temporary
        guarded_eval(
            "u = s\nu += s * 1",
            names={"s": "a" * 600_000},
            mode="exec",
            rules=RULES,
            backend="in-process",
        )


def test_helpers_do_not_stay_in_the_namespace() -> None:
    from pysandboxes.evalguard import api, engine

    compiled = engine.prepare("i = 0\ni += i * 2", "exec", api.resolve(None, RULES))
    assert "_sb_type" in compiled.helpers  # read from the namespace while it runs
    ns = engine.namespace(compiled, {}, strict=True)
    engine.run(compiled, ns)
    assert not [name for name in ns if name.startswith("_sb_") and not name.startswith("_sb_tmp")]


def test_one_long_call_in_process_ends_as_a_timeout_not_a_late_success() -> None:
    """In-process, one long C call with no check after it runs to its end (the worker is
    what interrupts it): the evaluation is then an EvalTimeout, never a late success."""

    from pysandboxes.errors import EvalTimeout

    names = {"a": 7**400_000 - 1, "b": 3**400_000 - 3}  # a // b: one C call
    start = time.monotonic()
    assert names["a"] // names["b"] > 0  # the control: plain Python, how long it takes
    budget_ms = max(1, int((time.monotonic() - start) * 1000 / 4))  # a quarter of that
    rules = ["eval-syntax=arith", f"eval-timeout={budget_ms}ms"]
    with pytest.raises(EvalTimeout):
        guarded_eval("a // b", names=names, rules=rules, backend="in-process")


@pytest.mark.parametrize("backend", ["in-process", "worker"])
def test_big_integer_division_imports_what_the_interpreter_needs(backend: str) -> None:
    """From CPython 3.12 a division of big integers imports ``_pylong`` from C, through the
    ``__import__`` of the running frame's builtins: the evaluation's builtins let that one
    import through (it was a ``KeyError: '__import__'``) and nothing else."""

    from pysandboxes.evalguard.runtime import _interpreter_import

    rules = ["eval-syntax=arith,compare"]
    a, b = 7**40_000 - 1, 3**40_000 - 3
    got = guarded_eval(
        "a // b == q", names={"a": a, "b": b, "q": a // b}, rules=rules, backend=backend
    )
    assert got is True
    if importlib.util.find_spec("_pylong") is not None:  # CPython 3.12 and later
        assert _interpreter_import("_pylong") is None  # the module never reaches the caller
    for name, level in (("os", 0), ("_pylong", 1)):
        with pytest.raises(ImportError):
            _interpreter_import(name, None, None, (), level)


def _names_read(code: object) -> set[str]:
    import dis

    return {i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_NAME"}  # type: ignore[arg-type]


def test_top_level_code_reads_the_helpers_as_constants() -> None:
    """The loop's checked operations read ``_sb_type``, ``_sb_int`` and the helpers as
    constants (the objects the namespace holds for the run), not by name: and each check
    still holds, the same source refused past its budget with a big int, as by name."""

    from pysandboxes.evalguard import engine
    from pysandboxes.evalguard.api import resolve

    rules = resolve(None, RULES)
    source = "t = 0\nfor i in range(n):\n    t += i * i\n"
    compiled = engine.prepare(source, "exec", rules)
    read = _names_read(compiled.code)
    assert {"_sb_type", "_sb_int", "_sb_mul"} <= set(compiled.helpers)
    assert not read & set(compiled.helpers), read  # (the run's ticks and temporaries: names)
    # control: the same compile without the binding reads them by name
    unbound = engine.rewrite.rewrite(engine.check.parse(source, "exec", rules))
    plain = compile(unbound, "<control>", "exec")
    assert {"_sb_type", "_sb_int"} <= _names_read(plain)
    assert guarded_eval(source, names={"n": 4}, mode="exec", rules=RULES) == {
        "n": 4,
        "t": 14,
        "i": 3,
    }
    big = "t = 0\nfor i in range(n):\n    t += x * x\n"
    with pytest.raises(EvalMemoryError):
        guarded_eval(big, names={"n": 2, "x": 2**300_000}, mode="exec", rules=RULES)


def test_a_source_with_many_constants_keeps_its_checks() -> None:
    """Past 256 constants a helper cannot be one without a longer instruction: it is read by
    name, as before (the result and the check are the same)."""

    lines = "".join(f"c{n} = {n}.5\n" for n in range(300))  # 300 constants, then the loop
    source = f"{lines}t = 0\nfor i in range(3):\n    t += i * i\n"
    from pysandboxes.evalguard import engine
    from pysandboxes.evalguard.api import resolve

    compiled = engine.prepare(source, "exec", resolve(None, RULES))
    assert {"_sb_type", "_sb_int"} <= _names_read(compiled.code)  # read by name, as before
    bound = guarded_eval(source, mode="exec", rules=RULES)
    assert (bound["t"], bound["i"], bound["c299"], len(bound)) == (5, 2, 299.5, 302)
    with pytest.raises(EvalMemoryError):
        guarded_eval(f"{lines}r = x * x", names={"x": 2**300_000}, mode="exec", rules=RULES)


def test_an_augmented_sum_of_an_inline_product_keeps_both_checks() -> None:
    """``t += i * i``: one test for the total and the product (no temporary), and either one
    not a small int goes through the checked helpers, as before."""

    from pysandboxes.evalguard import engine
    from pysandboxes.evalguard.api import resolve

    source = "t += i * i"
    compiled = engine.prepare(source, "exec", resolve(None, RULES))
    assert not [name for name in compiled.code.co_names if name.startswith("_sb_tmp")]
    assert guarded_eval(source, names={"t": 3, "i": 4}, mode="exec", rules=RULES)["t"] == 19
    assert guarded_eval(source, names={"t": 1.5, "i": 2}, mode="exec", rules=RULES)["t"] == 5.5
    big = 2**100_000  # an int total: the sum cannot grow it
    assert guarded_eval(source, names={"t": big, "i": 2}, mode="exec", rules=RULES)["t"] == big + 4
    with pytest.raises(EvalMemoryError):  # a big product: the checked multiplication
        guarded_eval(source, names={"t": 0, "i": 2**300_000}, mode="exec", rules=RULES)
    with pytest.raises(NameError, match="'t'"):  # the total is read first, as Python does
        guarded_eval("t += j * j", mode="exec", rules=RULES)
