"""The way back of guarded evaluation (issue 25): attacks on what the host does after, and
around, an evaluation, each with a control that reaches the objective without the guard.

Controls (see ``test_wayback_eval.py``):

- ``interrupt``: run in a child python whose loop a timer interrupts with a private
  ``BaseException`` (what the guard's interruption is); the objective is reached when the
  child prints ``AFTER`` (code of the source ran after the interruption) -- plain Python lets
  an ``except`` expression, a ``finally`` or a filter replace the interruption;
- ``cpu``: run in a child python, it is still running after one second;
- ``memory``: run in a child python limited to 512 MiB of address space, it raises
  ``MemoryError``;
- ``crash``: run in a child python, it dies of ``SIGSEGV`` (it would end the host);
- ``value``: run in this process, the expression ``probe`` is true afterwards;
- ``host``: run in a child python limited to 512 MiB, then what a host does with the outcome
  -- ``str()`` of the exception in its handler, or of the result ``r`` -- raises
  (``MemoryError``: shared references expanded; ``ValueError``: an int too long to print);
- ``state``: run in a child python, then ``probe`` (a source binding ``changed``), in a fresh
  namespace, sees what the attack left behind (``decimal.DefaultContext`` changed).

``held``: the exception ``guarded_eval`` raises under both backends (``worker`` and
``in-process``); ``cls``: the class of issue 25 it belongs to.
"""

from __future__ import annotations

from dataclasses import dataclass

from pysandboxes.errors import EvalCallDenied, EvalMemoryError, EvalRecursionError, EvalTimeout


class HostUnchanged(Exception):
    """Marker for ``held``: the evaluation runs; what it changed does not outlive it."""


T, M, R, C, U = EvalTimeout, EvalMemoryError, EvalRecursionError, EvalCallDenied, HostUnchanged

#: A generous profile (a code-interpreter tool's): the attacks must be held even so.
RULES = [
    "eval-syntax=arith,compare,conditional,loop,comprehension,assign,func,subscript,fstring,"
    "exception,context,import,yield,class",
    "eval-call=len,range,sum,min,max,sorted,list,dict,set,tuple,str,int,float,print,type,"
    "isinstance,abs,round,pow,format,repr,iter,next,map,zip,enumerate,Exception,ValueError,"
    "TypeError,"
    "ZeroDivisionError",
    "eval-attribute=str-methods,list-methods,dict-methods,set-methods,num-methods,prec,Emax,traps,"
    "sqrt,power,create_decimal",
    "eval-import=math,decimal,fractions,itertools",
    # generous on purpose: the attacks are interrupted by the budgets, well before the clock
    "eval-timeout=10s",
    "eval-max-iterations=200000",
    "eval-max-output=64K",
]


@dataclass(frozen=True)
class Attack:
    name: str
    cls: int
    source: str
    held: type[BaseException] | tuple[type[BaseException], ...]
    control: str
    #: ``value``: an expression over the attack's names; ``state``: a source binding
    #: ``changed`` (what the attack left behind, seen by a later, separate run).
    probe: str = ""


#: The loop every interruption attack runs until a budget (or the clock) ends it.
_LOOP = "while True:\n            pass"

ATTACKS: list[Attack] = [
    # -- class 7: an interruption replaced or followed by evaluated code ----------------------
    Attack(
        "except_expression_raises",
        7,
        f"""
try:
    try:
        {_LOOP}
    except (1 / 0):
        pass
except ZeroDivisionError:
    print("AFTER")
""",
        EvalTimeout,
        "interrupt",
    ),
    Attack(
        "finally_raises",
        7,
        f"""
try:
    try:
        {_LOOP}
    finally:
        raise ValueError("replaced")
except ValueError:
    print("AFTER")
""",
        EvalTimeout,
        "interrupt",
    ),
    Attack(
        "finally_runs_code",
        7,
        f"""
try:
    {_LOOP}
finally:
    print("AFTER")
""",
        EvalTimeout,
        "interrupt",
    ),
    Attack(
        "filter_of_the_guard_raises",
        7,
        f"""
try:
    try:
        {_LOOP}
    except 5:
        pass
except TypeError:
    print("AFTER")
""",
        EvalTimeout,
        "interrupt",
    ),
    Attack(
        "finally_in_a_function",
        7,
        f"""
def work():
    try:
        {_LOOP}
    finally:
        print("AFTER")
work()
""",
        EvalTimeout,
        "interrupt",
    ),
    Attack(
        "nested_finally_chain",
        7,
        f"""
def work():
    try:
        {_LOOP}
    finally:
        try:
            raise ValueError
        except ValueError:
            print("AFTER")
work()
""",
        EvalTimeout,
        "interrupt",
    ),
]

_CHANGED = "import decimal\nchanged = decimal.DefaultContext.prec != 28"

ATTACKS += [
    # -- class 8: estimates that could be sidestepped -----------------------------------------
    # The "cpu" controls must outlast their 1 s bound in plain CPython on a fast, quiet machine
    # with a wide margin: each takes 5 s or more on this project's machines.
    Attack("sum_with_start", 8, "rows = [[0] * 1000] * 20000\nr = sum(rows, [])", M, "cpu"),
    Attack(
        "sum_start_keyword", 8, "rows = [[0] * 1000] * 20000\nr = sum(rows, start=[])", M, "cpu"
    ),
    Attack(
        "round_huge_decimal", 8, "import decimal\nr = round(decimal.Decimal('1e900000'))", T, "cpu"
    ),
    Attack("int_huge_decimal", 8, "import decimal\nr = int(decimal.Decimal('1e900000'))", T, "cpu"),
    Attack(
        "decimal_modular_pow",
        8,
        # 6,000 digits: plain CPython needs some 10-20 s (the control's bound is 1 s, which
        # 2,000 digits no longer exceeded on a fast machine).
        "import decimal\nc = decimal.Context(prec=6000)\n"
        "r = c.power(3, c.create_decimal(10**5999), c.create_decimal(10**5999 + 7))",
        T,
        "cpu",
    ),
    Attack(
        "decimal_sqrt_high_precision",
        8,
        "import decimal\nc = decimal.Context(prec=1000000)\nr = c.sqrt(2)",
        T,
        "cpu",
    ),
    Attack(
        "slice_assignment",
        8,
        "import itertools\na = []\na[:] = itertools.repeat(0, 10**10)",
        T,
        "memory",
    ),
    Attack("math_gcd", 8, "import math\nr = math.gcd(3**1800000, 7**1600000)", T, "cpu"),
    Attack("math_lcm", 8, "import math\nr = math.lcm(*range(1, 2 * 10**5))", T, "cpu"),
    Attack(
        "format_reuses_one_argument",
        8,
        "big = 'x' * 10**6\nr = ('{0}' * 2000).format(big)",
        M,
        "memory",
    ),
    Attack(
        "percent_reuses_one_argument",
        8,
        "big = 'x' * 10**6\nr = ('%s' * 2000) % ((big,) * 2000)",
        M,
        "memory",
    ),
    Attack(
        "percent_mapping_reuses_one_key",
        8,
        "big = 'x' * 10**6\nr = ('%(a)s' * 2000) % {'a': big}",
        M,
        "memory",
    ),
    Attack(
        "fstring_reuses_one_argument",
        8,
        "big = 'x' * 10**6\nr = f'" + "{big}" * 2000 + "'",
        M,
        "memory",
    ),
    Attack("str_of_a_shared_list", 8, "r = str(['x' * 10**6] * 2000)", M, "memory"),
    Attack("fstring_of_a_shared_list", 8, "l = ['x' * 10**6] * 2000\nr = f'{l}'", M, "memory"),
    Attack("print_of_a_shared_list", 8, "print(['x' * 10**6] * 2000)", M, "memory"),
    Attack(
        "format_map_nested_width",
        8,
        "class M(dict):\n    pass\nr = '{w:{w}}'.format_map(M(w=10**9))",
        M,
        "memory",
    ),
    Attack(
        "deep_map_chain",
        8,
        "x = range(3)\nfor i in range(150000):\n    x = map(abs, x)\nr = list(x)",
        R,
        "crash",
    ),
    Attack(
        "private_keyword_of_a_constructor",
        8,
        "import fractions\nr = fractions.Fraction(10**4000, 10**3999, _normalize=False)",
        C,
        "value",
        probe="r.denominator == 10**3999",
    ),
    Attack(
        "default_context_changed",
        8,
        "import decimal\ndecimal.DefaultContext.prec = 7",
        U,
        "state",
        probe=_CHANGED,
    ),
    Attack(
        "default_context_installed",
        8,
        "import decimal\ndecimal.setcontext(decimal.Context(prec=9, Emax=99))",
        U,
        "state",
        probe="import decimal\nchanged = decimal.getcontext().prec != 28",
    ),
]

ATTACKS += [
    # -- classes 1, 3 and 4: what the host makes of a result or an exception -----------------
    Attack(
        "keyerror_of_a_shared_key",
        1,
        "d = {}\nd[('x' * 10**6,) * 700]",
        KeyError,
        "host",
    ),
    Attack("keyerror_of_a_huge_int", 4, "d = {}\nd[10**5000]", KeyError, "host"),
    Attack(
        "exception_args_shared",
        1,
        "raise ValueError(['x' * 10**6] * 700)",
        ValueError,
        "host",
    ),
    Attack(
        "exception_chain_args_shared",
        1,
        "try:\n    {}[('x' * 10**6,) * 700]\nexcept Exception:\n    raise ValueError('small')",
        ValueError,
        "host",
    ),
    Attack("result_of_shared_references", 1, "r = ['x' * 10**6] * 700", M, "host"),
    Attack(
        "result_doubling_tree",
        3,
        "r = [1]\nfor i in range(60):\n    r = [r, r]",
        M,
        "host",
    ),
]

#: Sources that use ``try``/``except``/``finally`` as tools do: they must keep working.
LEGIT: list[tuple[str, str, object]] = [
    (
        "finally_runs_normally",
        "log = []\ntry:\n    x = 1 / 0\nexcept ZeroDivisionError:\n    log.append('caught')\n"
        "finally:\n    log.append('finally')\n",
        {"log": ["caught", "finally"]},
    ),
    (
        "except_tuple",
        "r = 0\ntry:\n    int('x')\nexcept (TypeError, ValueError) as e:\n    r = str(e)[:7]\n",
        {"r": "invalid"},
    ),
    (
        "sums_formats_and_conversions",
        "import decimal, math, fractions\n"
        "rows = [[1, 2], [3], [4, 5, 6]]\n"
        "flat = sum(rows, [])\n"
        "pairs = sum([(1, 2), (3,)], ())\n"
        "name = 'ab'\n"
        "line = f'{name}-{len(flat)}:{flat[0]:>3}|{name!r}'\n"
        "twice = '{0}{0}'.format(name) + '%s/%s' % (name, name) + '%(n)s' % {'n': name}\n"
        "big = int(decimal.Decimal('1e50')) == 10**50\n"
        "rounded = round(decimal.Decimal('2.5'))\n"
        "g = math.gcd(2**64, 6**30)\n"
        "l = math.lcm(4, 6, 10)\n"
        "half = fractions.Fraction(3, 6) == fractions.Fraction(1, 2)\n"
        "kinds = [isinstance('x', str), type(1) is int, isinstance(map(abs, []), map)]\n"
        "m = list(map(abs, map(abs, zip([-1], [2]) and [-3, 4])))\n"
        "e = [i for i, _ in enumerate(map(str, range(3)))]\n"
        "a = [0, 0, 0]\n"
        "a[1:] = (x * 2 for x in range(4))\n"
        "text = str([name] * 3) + repr({'k': (1, 2)})\n",
        {
            "rows": [[1, 2], [3], [4, 5, 6]],
            "name": "ab",
            "flat": [1, 2, 3, 4, 5, 6],
            "pairs": (1, 2, 3),
            "line": "ab-6:  1|'ab'",
            "twice": "ababab/abab",
            "big": True,
            "rounded": 2,
            "g": 2**30,
            "l": 60,
            "half": True,
            "kinds": [True, True, True],
            "m": [3, 4],
            "e": [0, 1, 2],
            "a": [0, 0, 2, 4, 6],
            "text": "['ab', 'ab', 'ab']{'k': (1, 2)}",
        },
    ),
    (
        "decimal_context_within_one_evaluation",
        "import decimal\n"
        "decimal.getcontext().prec = 50\n"
        "third = str(decimal.Decimal(1) / decimal.Decimal(3))\n",
        {"third": "0." + "3" * 50},
    ),
    (
        "bare_except",
        "r = 0\ntry:\n    [][1]\nexcept:\n    r = 2\nfinally:\n    r += 1\n",
        {"r": 3},
    ),
]

__all__ = ["ATTACKS", "LEGIT", "RULES", "Attack", "HostUnchanged"]
