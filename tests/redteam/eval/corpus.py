"""Sources an LLM could be tricked into writing, and sources a legitimate tool evaluates.

Each :class:`Attack` has a *control*: how plain ``exec`` of the same source (real builtins,
the same names) reaches the objective on this machine, so that a held attack is a real one:

- ``value``: run in this process, ``objective(ns)`` must be true afterwards;
- ``cpu``: run in a child python, it is still running after one second;
- ``memory``: run in a child python limited to 512 MiB (or ``limit_mib``) of address space
  (four to eight times the allocation budget), it raises
  ``MemoryError`` (it tried to allocate more);
- ``output``: run in a child python, it prints more than 1 MiB;
- ``exit``: it raises ``SystemExit`` (it would end the host);
- ``recursion``: it raises ``RecursionError``: it went as deep as the interpreter allows
  (about 1000 frames, ten times the guarded budget).
- ``crash``: run in a child python, it dies of ``SIGSEGV`` (it would end the host);
- ``roundtrip``: run in a child python, then its ``result`` pickled and unpickled (what
  crossing back from a worker does): still running after one second.

``rules`` (default :data:`RULES`): the profile of the attack (:data:`CALC_RULES` for sympy).

``held`` is the exception ``guarded_eval`` must raise under :data:`RULES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from fractions import Fraction
from typing import Any

from pysandboxes.errors import (
    ConfigError,
    EvalAttributeDenied,
    EvalCallDenied,
    EvalMemoryError,
    EvalOutputError,
    EvalRecursionError,
    EvalSyntaxRejected,
    EvalTimeout,
    EvalWorkerError,
    RuleEvalError,
)

#: A generous profile, as a code-interpreter tool would grant: attacks must be held even so.
RULES = [
    "eval-syntax=arith,compare,conditional,loop,comprehension,assign,func,subscript,fstring,"
    "exception,context,import,yield,class",
    "eval-call=len,range,sum,min,max,sorted,list,dict,set,tuple,str,int,float,print,type,"
    "isinstance,getattr,hasattr,enumerate,zip,map,filter,abs,round,pow,format,bytes,bytearray,"
    "repr,iter,next,any,all,Exception,ValueError,TypeError,ZeroDivisionError,RecursionError,"
    "TimeoutError",
    "eval-attribute=str-methods,list-methods,dict-methods,set-methods,num-methods,date-methods",
    "eval-import=math,statistics,fractions,decimal,random,collections,itertools,datetime",
    "eval-magic=__init__",
    "eval-timeout=700ms",
    "eval-max-output=64K",
]


#: A calculator's profile over sympy, generous too (imports, loops, functions).
CALC_RULES = [
    "eval-syntax=arith,compare,conditional,loop,comprehension,assign,func,subscript,fstring,"
    "exception,import",
    "eval-call=len,range,print,str,int,list,dict,sorted,sum,min,max,abs,isinstance",
    "eval-attribute=str-methods,list-methods,dict-methods",
    "eval-import=sympy",
    # the first evaluation in a new worker imports sympy: seconds on a loaded machine
    "eval-timeout=8s",
    "eval-max-output=64K",
    # the worker's own rule: sympy loads the interpreter through ctypes when imported
    "python-api=ALLOW:ctypes.CDLL",
]


@dataclass
class Attack:
    name: str
    source: str
    held: Any  # an exception class, or a tuple of them
    control: str = "value"
    objective: Callable[[dict[str, Any]], bool] | None = None
    names: dict[str, Any] = field(default_factory=dict)
    limit_mib: int = 512  # the address space of a memory control
    rules: list[str] | None = None  # None: RULES
    #: The backends that hold it (a C stack overflow ends the process it happens in: only a
    #: worker of its own holds it, docs/eval.md "Limits").
    backends: tuple[str, ...] = ("worker", "in-process")


def _has_result(ns: dict[str, Any]) -> bool:
    return ns.get("result") is not None


def _dict_with_builtins(ns: dict[str, Any]) -> bool:
    return isinstance(ns.get("result"), dict) and "__builtins__" in ns["result"]


def _is_module(name: str) -> Callable[[dict[str, Any]], bool]:
    return lambda ns: type(ns.get("result")).__name__ == "module" and ns["result"].__name__ == name


def _frame(ns: dict[str, Any]) -> bool:
    return type(ns.get("result")).__name__ == "frame"


def _a_class(ns: dict[str, Any]) -> bool:
    return isinstance(ns.get("result"), type)


class HostUnchanged(Exception):
    """Marker for ``held``: the evaluation runs, and the host's data is left as it was."""


U = HostUnchanged
R = EvalSyntaxRejected
A = EvalAttributeDenied
T = EvalTimeout
M = EvalMemoryError

ATTACKS: list[Attack] = [
    # -- dunder, frame and generator walks --------------------------------------------------
    Attack(
        "subclasses_walk",
        "result = ().__class__.__bases__[0].__subclasses__()",
        R,
        objective=lambda ns: len(ns["result"]) > 100,
    ),
    Attack(
        "function_globals",
        "def f():\n    pass\nresult = f.__globals__",
        R,
        objective=_dict_with_builtins,
    ),
    Attack(
        "lambda_globals_getattr",
        "result = getattr(lambda: 0, '__globals__')",
        A,
        objective=_dict_with_builtins,
    ),
    Attack("generator_frame", "result = (x for x in [1]).gi_frame", R, objective=_frame),
    Attack(
        "generator_frame_getattr",
        "result = getattr((x for x in [1]), 'gi_frame')",
        A,
        objective=_frame,
    ),
    Attack(
        "generator_frame_globals",
        "def gen():\n    yield 1\ng = gen()\nnext(g)\n"
        "result = getattr(getattr(g, 'gi_frame'), 'f_globals')",
        A,
        objective=_dict_with_builtins,
    ),
    Attack(
        "function_code",
        "def f():\n    pass\nresult = getattr(f, '__code__')",
        A,
        objective=lambda ns: type(ns["result"]).__name__ == "code",
    ),
    Attack(
        "builtin_self", "result = getattr(len, '__self__')", A, objective=_is_module("builtins")
    ),
    Attack(
        "traceback_frame",
        "try:\n    1 / 0\nexcept Exception as e:\n    result = e.__traceback__.tb_frame.f_globals",
        R,
        objective=_has_result,
    ),
    Attack(
        "traceback_getattr",
        "try:\n    1 / 0\nexcept Exception as e:\n    result = getattr(e, '__traceback__')",
        A,
        objective=_has_result,
    ),
    Attack(
        "mro_walk", "result = [].__class__.__mro__[-1].__subclasses__()", R, objective=_has_result
    ),
    Attack(
        "type_mro_method",
        "result = getattr(type(1), 'mro')()",
        A,
        objective=lambda ns: object in ns["result"],
    ),
    Attack(
        "method_self",
        "result = getattr([].append, '__self__')",
        A,
        objective=lambda ns: ns["result"] == [],
    ),
    Attack(
        "coroutine_frame",
        "async def c():\n    pass\nresult = getattr(c(), 'cr_frame')",
        R,
        objective=_frame,
    ),
    # -- format strings --------------------------------------------------------------------
    Attack(
        "format_class",
        "result = '{0.__class__}'.format(1)",
        A,
        objective=lambda ns: "int" in ns["result"],
    ),
    Attack(
        "format_globals",
        "def f():\n    pass\nresult = '{0.__globals__}'.format(f)",
        A,
        objective=lambda ns: "__builtins__" in ns["result"],
    ),
    Attack(
        "format_map_walk",
        "result = '{x.__class__.__mro__}'.format_map({'x': 1})",
        A,
        objective=lambda ns: "object" in ns["result"],
    ),
    Attack(
        "format_generator_frame",
        "result = '{0.gi_frame}'.format((i for i in []))",
        A,
        objective=lambda ns: "frame" in ns["result"],
    ),
    Attack(
        "format_unbound",
        "result = str.format('{0.__class__.__base__}', 1)",
        A,
        objective=lambda ns: "object" in ns["result"],
    ),
    Attack(
        "fstring_walk",
        "result = f'{().__class__.__base__}'",
        R,
        objective=lambda ns: "object" in ns["result"],
    ),
    # -- imports of names ------------------------------------------------------------------
    Attack("import_os", "import os\nresult = os", R, objective=_is_module("os")),
    Attack(
        "import_name_sys",
        "from statistics import sys\nresult = sys",
        A,
        objective=_is_module("sys"),
    ),
    Attack(
        "module_attr_sys",
        "import fractions\nresult = fractions.sys",
        A,
        objective=_is_module("sys"),
    ),
    Attack(
        "private_module_name", "from random import _os\nresult = _os", R, objective=_is_module("os")
    ),
    Attack("module_builtins", "import math\nresult = math.__loader__", R, objective=_has_result),
    Attack("dunder_import", "result = __import__('os')", R, objective=_is_module("os")),
    Attack(
        "import_importlib",
        "import importlib\nresult = importlib.import_module('os')",
        R,
        objective=_is_module("os"),
    ),
    Attack(
        "method_globals_from_module",
        "import fractions\nresult = fractions.Fraction.limit_denominator.__globals__",
        R,
        objective=_dict_with_builtins,
    ),
    Attack(
        "library_string_eval",
        "import collections\nresult = collections.namedtuple('P', 'x y')",
        RuleEvalError,
        objective=_a_class,
    ),
    # -- host data --------------------------------------------------------------------------
    Attack(
        "host_store",
        "config['limit'] = 10**6",
        U,
        objective=lambda ns: ns["config"]["limit"] == 10**6,
    ),
    Attack(
        "host_nested_store",
        "data['rows'][0]['x'] = 'evil'",
        U,
        objective=lambda ns: ns["data"]["rows"][0]["x"] == "evil",
    ),
    Attack("host_method_clear", "rows.clear()", U, objective=lambda ns: ns["rows"] == []),
    Attack(
        "host_function_globals",
        "result = getattr(callback, '__globals__')",
        A,
        objective=_dict_with_builtins,
    ),
    Attack(
        "host_function_setattr",
        "callback.limit = 0",
        A,
        objective=lambda ns: getattr(ns["callback"], "limit", None) == 0,
    ),
    Attack(
        "host_object",
        "secret.value = 'leaked'",
        TypeError,
        objective=lambda ns: ns["secret"].value == "leaked",
    ),
    # -- helper shadowing -------------------------------------------------------------------
    Attack(
        "shadow_helper_by_name",
        "_sb_ga = lambda o, n: 1\nresult = [].append",
        R,
        objective=_has_result,
    ),
    Attack("shadow_builtins_dunder", "result = __builtins__", R, objective=_has_result),
    Attack(
        "global_helper",
        "def f():\n    global _sb_t\n    _sb_t = iter([])\nf()",
        R,
        objective=lambda ns: "_sb_t" in ns,
    ),
    # -- type() and class factories ---------------------------------------------------------
    Attack(
        "type_three_args", "result = type('X', (), {'y': 1})", EvalCallDenied, objective=_a_class
    ),
    Attack(
        "type_of_type", "result = type(type(1))('X', (), {})", EvalCallDenied, objective=_a_class
    ),
    Attack(
        "metaclass_base",
        "class M(type(int)):\n    pass\nresult = M",
        EvalCallDenied,
        objective=_a_class,
    ),
    Attack(
        "class_subclasses",
        "class A:\n    pass\nresult = A.__subclasses__()",
        R,
        objective=lambda ns: ns["result"] == [],
    ),
    Attack(
        "class_keyword_metaclass",
        "class A(metaclass=type):\n    pass\nresult = A",
        R,
        objective=_a_class,
    ),
    # -- interactive helpers ---------------------------------------------------------------
    Attack("help", "result = help", R, objective=_has_result),
    Attack("exit", "exit(3)", R, control="exit"),
    Attack("quit", "quit()", R, control="exit"),
    Attack("breakpoint", "result = breakpoint", R, objective=_has_result),
    Attack("open_file", "result = open('/etc/hostname').read()", R, objective=_has_result),
    Attack("globals_builtin", "result = globals()", R, objective=_dict_with_builtins),
    # -- unicode spellings ------------------------------------------------------------------
    Attack(
        "fullwidth_eval",
        "result = \uff45\uff56\uff41\uff4c('1 + 1')",
        R,
        objective=lambda ns: ns["result"] == 2,
    ),
    Attack(
        "fullwidth_dunder",
        "result = ().__\uff43\uff4c\uff41\uff53\uff53__",
        R,
        objective=lambda ns: ns["result"] is tuple,
    ),
    Attack(
        "fullwidth_import",
        "result = __\uff49\uff4d\uff50\uff4f\uff52\uff54__('os')",
        R,
        objective=_is_module("os"),
    ),
    Attack("mathematical_open", "result = \U0001d428pen", R, objective=_has_result),
    # -- CPU: loops and single C calls ------------------------------------------------------
    Attack("while_true", "while True:\n    pass", T, control="cpu"),
    Attack("sum_range", "sum(range(10**12))", T, control="cpu"),
    Attack("max_range", "max(range(10**12))", T, control="cpu"),
    Attack("comprehension_flood", "[x for x in range(10**12)]", T, control="cpu"),
    Attack("any_generator", "any(x < 0 for x in range(10**12))", T, control="cpu"),
    Attack("library_lazy_arg", "import math\nmath.fsum(range(10**12))", T, control="cpu"),
    # a million keys may outgrow the memory budget before the iteration count trips
    Attack("dict_fromkeys_range", "dict.fromkeys(range(10**12))", (T, M), control="cpu"),
    Attack(
        "exponential_calls",
        "def f(n):\n    return 0 if n == 0 else f(n - 1) + f(n - 1)\nf(60)",
        T,
        control="cpu",
    ),
    Attack("big_pow", "pow(10, 10**8)", M, control="cpu"),
    Attack("factorial", "import math\nmath.factorial(10**7)", M, control="cpu"),
    Attack(
        "decimal_precision",
        "from decimal import getcontext, Decimal\ngetcontext().prec = 10**9\n"
        "Decimal(1) / Decimal(7)",
        M,
        control="memory",
    ),
    # -- memory through operators, methods and constructors --------------------------------
    Attack("center", "'a'.center(10**9)", M, control="memory"),
    Attack("to_bytes", "(1).to_bytes(10**9, 'big')", M, control="memory"),
    Attack("list_range", "list(range(10**8))", M, control="memory"),
    Attack("bytes_n", "bytes(10**9)", M, control="memory"),
    Attack("bytearray_n", "bytearray(10**9)", M, control="memory"),
    Attack("list_repeat", "[0] * 10**9", M, control="memory"),
    Attack("str_repeat", "'ab' * 10**9", M, control="memory"),
    Attack("power_tower", "10**10**10", M, control="cpu"),
    Attack("ljust", "'x'.ljust(10**9)", M, control="memory"),
    Attack("zfill", "'1'.zfill(10**9)", M, control="memory"),
    Attack("expandtabs", "('\\t' * 100).expandtabs(10**7)", M, control="memory"),
    Attack("replace_empty", "('a' * 10**4).replace('', 'b' * 10**5)", M, control="memory"),
    Attack("join_flood", "'-'.join(['x' * 10**6] * 1000)", M, control="memory"),
    Attack("percent_width", "'%01000000000d' % 1", M, control="memory"),
    Attack("percent_star", "'%0*d' % (10**9, 1)", M, control="memory"),
    Attack("fstring_width", "n = 10**9\nf'{1:>{n}}'", M, control="memory"),
    Attack("format_width", "'{:>1000000000}'.format(1)", M, control="memory"),
    Attack("format_builtin", "format(1, '>1000000000')", M, control="memory"),
    Attack("doubling_add", "s = 'x'\nfor i in range(40):\n    s = s + s", M, control="memory"),
    Attack("doubling_extend", "l = [0]\nfor i in range(40):\n    l.extend(l)", M, control="memory"),
    # Refused as an allocation, or as a timeout when the machine is slow (each squaring
    # before the refused one takes longer than the last).
    Attack("squaring_int", "x = 3\nfor i in range(40):\n    x = x * x", (M, T), control="cpu"),
    Attack("shift", "1 << 10**10", M, control="memory"),
    # Each inner list is small: the growth of the process's peak memory is what trips, and when
    # this process already peaked higher (earlier tests) the clock or the iteration count does.
    Attack("nested_comprehension", "[[0] * 10**4 for _ in range(10**5)]", (M, T), control="memory"),
    # -- output floods ----------------------------------------------------------------------
    Attack(
        "print_loop",
        "for i in range(10**5):\n    print('x' * 100)",
        EvalOutputError,
        control="output",
    ),
    Attack("print_once", "print('x' * 10**7)", EvalOutputError, control="output"),
    # -- swallowed interruptions ------------------------------------------------------------
    Attack(
        "bare_except", "try:\n    while True:\n        pass\nexcept:\n    pass", T, control="cpu"
    ),
    Attack(
        "except_exception_loop",
        "while True:\n    try:\n        sum(range(10**12))\n    except Exception:\n        pass",
        T,
        control="cpu",
    ),
    Attack(
        "except_timeout_error",
        "while True:\n    try:\n        while True:\n            pass\n"
        "    except (TimeoutError, Exception):\n        pass",
        T,
        control="cpu",
    ),
    Attack(
        "except_base_exception",
        "try:\n    while True:\n        pass\nexcept BaseException:\n    pass",
        R,
        control="cpu",
    ),
    Attack(
        "return_in_finally",
        "def f():\n    try:\n        while True:\n            pass\n    finally:\n"
        "        return 1\nf()\nwhile True:\n    pass",
        R,
        control="cpu",
    ),
    Attack(
        "continue_in_finally",
        "for i in range(10**12):\n    try:\n        while True:\n            pass\n"
        "    finally:\n        continue",
        R,
        control="cpu",
    ),
    Attack(
        "generator_exit_swallow",
        "def g():\n    while True:\n        try:\n            yield 1\n"
        "        except GeneratorExit:\n            pass\nresult = g",
        R,
        objective=_has_result,
    ),
    # -- recursion --------------------------------------------------------------------------
    Attack(
        "recursion", "def f(n):\n    return f(n + 1)\nf(0)", EvalRecursionError, control="recursion"
    ),
    Attack(
        "recursion_caught",
        "def f(n):\n    try:\n        return f(n + 1)\n    except RecursionError:\n"
        "        return f(n + 1)\nf(0)",
        EvalRecursionError,
        control="cpu",
    ),
    Attack("lambda_omega", "w = lambda g: g(g)\nw(w)", EvalRecursionError, control="recursion"),
    Attack(
        "mutual_recursion",
        "def a():\n    return b()\ndef b():\n    return a()\na()",
        EvalRecursionError,
        control="recursion",
    ),
    # -- source size -----------------------------------------------------------------------
    Attack(
        "node_flood",
        "result = [" + "1," * 20000 + "]",
        R,
        objective=lambda ns: len(ns["result"]) == 20000,
    ),
]


def host_names() -> dict[str, Any]:
    """Fresh host data for one attack (the host-data attacks look at it afterwards)."""

    class Secret:
        value = "kept"

    def callback() -> int:
        return 1

    def hand_out() -> Any:
        import os

        return os

    return {
        "config": {"limit": 10},
        "data": {"rows": [{"x": 1}]},
        "rows": [1, 2, 3],
        "callback": callback,
        "hand_out": hand_out,
        "secret": Secret(),
    }


@dataclass
class Legit:
    name: str
    source: str
    expected: Any
    mode: str = "eval"
    names: dict[str, Any] = field(default_factory=dict)
    rules: list[str] | None = None  # None: RULES


LEGIT: list[Legit] = [
    Legit("arithmetic", "2 + 3 * 4 - 10 / 4", 11.5),
    Legit("power_and_modulo", "(2 ** 100) % 97 + 7 // 2", (2**100) % 97 + 3),
    Legit(
        "names_in",
        "price * quantity * (1 + tax)",
        2 * 3 * 1.5,
        names={"price": 2, "quantity": 3, "tax": 0.5},
    ),
    Legit("comparison_chain", "0 < x <= 10 and not x == 3", True, names={"x": 5}),
    Legit("conditional", "'big' if x > 100 else 'small'", "small", names={"x": 5}),
    Legit("list_comprehension", "[i * i for i in range(10) if i % 2]", [1, 9, 25, 49, 81]),
    Legit(
        "dict_comprehension",
        "{k: len(k) for k in words}",
        {"ab": 2, "cde": 3},
        names={"words": ["ab", "cde"]},
    ),
    Legit(
        "nested_comprehension",
        "[[i * j for j in range(3)] for i in range(3)]",
        [[0, 0, 0], [0, 1, 2], [0, 2, 4]],
    ),
    Legit(
        "math_module",
        "import math\nresult = round(math.sqrt(2) * math.pi, 6)",
        {"result": round(2**0.5 * 3.141592653589793, 6)},
        mode="exec",
    ),
    Legit(
        "statistics",
        "import statistics\nm = statistics.mean(xs)\ns = statistics.stdev(xs)",
        {"m": 2.5, "s": 1.2909944487358056, "xs": [1, 2, 3, 4]},
        mode="exec",
        names={"xs": [1, 2, 3, 4]},
    ),
    Legit(
        "fractions",
        "from fractions import Fraction\nr = sum(Fraction(1, n) for n in range(1, 6))",
        {"r": __import__("fractions").Fraction(137, 60)},
        mode="exec",
    ),
    Legit(
        "decimal_precision",
        "from decimal import Decimal, getcontext\ngetcontext().prec = 30\n"
        "r = str(Decimal(1) / Decimal(7))",
        {"r": "0.142857142857142857142857142857"},
        mode="exec",
    ),
    Legit(
        "fstring",
        "f'{name}: {value:.2f} ({ratio:.1%})'",
        "pi: 3.14 (50.0%)",
        names={"name": "pi", "value": 3.14159, "ratio": 0.5},
    ),
    Legit("format_method", "'{:.2f}'.format(x)", "3.14", names={"x": 3.14159}),
    Legit("format_named", "'{name} has {n:,} rows'.format(name='t', n=12345)", "t has 12,345 rows"),
    Legit(
        "function_defined",
        "def area(w, h):\n    return w * h\nr = area(3, 4)",
        {"r": 12},
        mode="exec",
    ),
    Legit(
        "recursion_defined",
        "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nr = fib(15)",
        {"r": 610},
        mode="exec",
    ),
    Legit(
        "sorted_key_lambda",
        "sorted(rows, key=lambda r: (-r['n'], r['name']))",
        [{"name": "b", "n": 3}, {"name": "a", "n": 1}],
        names={"rows": [{"name": "a", "n": 1}, {"name": "b", "n": 3}]},
    ),
    Legit(
        "loop_accumulate",
        "total = 0\nfor i in range(1000):\n    total += i * i",
        {"total": sum(i * i for i in range(1000)), "i": 999},
        mode="exec",
    ),
    Legit(
        "while_loop",
        "n = 27\nsteps = 0\nwhile n != 1:\n    n = n // 2 if n % 2 == 0 else 3 * n + 1\n"
        "    steps += 1",
        {"n": 1, "steps": 111},
        mode="exec",
    ),
    Legit(
        "string_methods",
        "' '.join(w.capitalize() for w in s.split())",
        "Hello World",
        names={"s": "hello world"},
    ),
    Legit(
        "exceptions",
        "try:\n    r = 1 / 0\nexcept ZeroDivisionError:\n    r = 'inf'",
        {"r": "inf"},
        mode="exec",
    ),
    Legit(
        "class_defined",
        "class Acc:\n    def __init__(self):\n        self.total = 0\n    def add(self, x):\n"
        "        self.total += x\n        return self\nr = Acc().add(2).add(3).total",
        {"r": 5},
        mode="exec",
    ),
    Legit("host_function", "double(21)", 42, names={"double": lambda x: x * 2}),
    Legit(
        "datetime",
        "import datetime\nr = (datetime.date(2024, 3, 1) - datetime.date(2024, 2, 1)).days",
        {"r": 29},
        mode="exec",
    ),
    Legit(
        "collections_counter",
        "import collections\nr = collections.Counter('abracadabra').most_common(1)",
        {"r": [("a", 5)]},
        mode="exec",
    ),
    Legit(
        "generator_function",
        "def evens(n):\n    for i in range(n):\n        if i % 2 == 0:\n            yield i\n"
        "r = list(evens(7))",
        {"r": [0, 2, 4, 6]},
        mode="exec",
    ),
    Legit(
        "isinstance_builtin_type", "isinstance(x, list) and type(x) == list", True, names={"x": [1]}
    ),
    Legit("big_but_bounded", "len(str(2 ** 10000)) + len('ab' * 1000)", 3011 + 2000),
]

ATTACKS += [
    Attack(
        "library_class_lazy_arg",
        "import collections\ncollections.Counter(range(10**12))",
        (T, M),  # a million counted keys may outgrow the memory budget first
        control="cpu",
    ),
    Attack(
        "library_context_precision",
        "import decimal\nctx = decimal.Context(prec=10**9)\nctx.divide(1, 7)",
        M,
        control="memory",
    ),
    Attack(
        "host_function_result",
        "result = hand_out()",
        TypeError,
        objective=lambda ns: type(ns["result"]).__name__ == "module",
    ),
]

ATTACKS += [
    Attack(
        "guard_class_by_type",
        "import math\nV = type(math)\ntry:\n"
        "    result = getattr(V((x for x in [1]), 'g'), 'gi_frame')\n"
        "except TypeError:\n    result = getattr((x for x in [1]), 'gi_frame')",
        EvalCallDenied,
        objective=_frame,
    ),
    Attack(
        "metaclass_method_on_class",
        "import fractions\nresult = getattr(fractions.Fraction, 'mro')()",
        A,
        objective=lambda ns: object in ns["result"],
    ),
]

ATTACKS += [
    Attack(
        "random_randbytes",
        "import random\nrandom.randbytes(2 * 10**8)",
        M,
        control="memory",
        limit_mib=256,
    ),
    Attack(
        "random_getrandbits",
        "import random\nrandom.getrandbits(2 * 10**9).bit_length()",
        M,
        control="memory",
        limit_mib=256,
    ),
]

ATTACKS += [
    # The names-only fast path of % and + (no call when both operands are ints) must still send
    # strings to the checked helpers.
    Attack("percent_width_by_name", "f = '%01000000000d'\nn = 1\nf % n", M, control="memory"),
    Attack(
        "augmented_add_by_name",
        "s = 'x' * 1000\nt = s\nfor i in range(30):\n    s += s",
        M,
        control="memory",
    ),
]


# -- second round ---------------------------------------------------------------------------------
# C code that consumes an iterator with no tick of the guard's: in-process nothing could stop
# it (the worker is killed at its timeout either way).


def _sympy_attribute(name: str, restore: Callable[[], None]) -> Callable[[dict[str, Any]], bool]:
    """Objective of a write to sympy's shared objects; the control's write is undone."""

    def reached(ns: dict[str, Any]) -> bool:
        import sympy

        try:
            return bool(eval(name, {"sympy": sympy}))
        finally:
            restore()

    return reached


def _undo_evil() -> None:
    import sympy

    for owner in (sympy.S, sympy.Symbol):
        if "evil" in vars(owner) if hasattr(owner, "__dict__") else False:
            delattr(owner, "evil")


def _undo_name() -> None:
    import sympy

    sympy.Symbol("x").name = "x"


#: The second round (also run through python-sb's guarded exec: test_builtins_round2.py).
SECOND_ROUND: list[Attack] = [
    Attack("in_range_not_int", "'a' in range(10**12)", T, control="cpu"),
    Attack("in_count", "import itertools\n-1 in itertools.count()", T, control="cpu"),
    Attack("in_map_of_range", "-1 in map(abs, range(10**12))", T, control="cpu"),
    Attack("in_zip", "(-1,) in zip(range(10**12))", T, control="cpu"),
    Attack("in_enumerate", "(-1, -1) in enumerate(range(10**12))", T, control="cpu"),
    Attack(
        "next_filter_repeat",
        "import itertools\nnext(filter(None, itertools.repeat(0)))",
        T,
        control="cpu",
    ),
    Attack("next_filter_iter_callable", "next(filter(None, iter(int, 1)))", T, control="cpu"),
    Attack("set_isdisjoint_range", "{1}.isdisjoint(range(-10**12, 0))", T, control="cpu"),
    Attack(
        "set_union_repeat", "import itertools\nset().union(itertools.repeat(0))", T, control="cpu"
    ),
    Attack(
        "deque_extend_range",
        "import collections\nd = collections.deque(maxlen=1)\nd.extend(range(10**12))",
        T,
        control="cpu",
    ),
    Attack(
        "counter_update_repeat",
        "import collections, itertools\nc = collections.Counter()\nc.update(itertools.repeat(1))",
        T,
        control="cpu",
    ),
    Attack(
        "starred_assign_count",
        "import itertools\na, *b = itertools.repeat(0)",
        (T, M),
        control="memory",
    ),
    Attack("starred_assign_range", "a, *b = range(10**9)", M, control="memory"),
    Attack("starred_display_map", "[*map(abs, range(10**12))]", (T, M), control="memory"),
    Attack("starred_call_range", "max(*range(10**9))", M, control="memory"),
    Attack("starred_for_target", "for a, *b in [range(10**9)]:\n    pass", M, control="memory"),
    Attack("starred_nested_target", "a, (b, *c) = 1, range(10**9)", R, control="memory"),
    # -- counts that are not ints: the estimates must see the number ----------------------------
    Attack(
        "sympy_integer_count",
        "import sympy\nlen('a' * sympy.Integer(10**9))",
        M,
        control="memory",
        rules=CALC_RULES,
    ),
    Attack(
        "sympy_integer_exponent",
        "import sympy\n10 ** sympy.Integer(10**10)",
        M,
        control="cpu",
        rules=CALC_RULES,
    ),
    Attack(
        "sympy_generator_in",
        "import sympy\nx = sympy.Symbol('x')\nx in sympy.numbered_symbols()",
        T,
        control="cpu",
        rules=CALC_RULES,
    ),
    # -- a granted module's functions that write into their caller, run processes, print --------
    Attack(
        "sympy_var_writes_caller_globals",
        "import sympy\nsympy.var('need')",
        A,
        objective=lambda ns: type(ns.get("need")).__name__ == "Symbol",
        rules=CALC_RULES,
    ),
    Attack(
        "sympy_test_runner",
        "import sympy\nresult = sympy.test",
        A,
        objective=_has_result,
        rules=CALC_RULES,
    ),
    Attack(
        "sympy_preview_runs_latex",
        "from sympy import preview\nresult = preview",
        A,
        objective=_has_result,
        rules=CALC_RULES,
    ),
    Attack(
        "sympy_init_session",
        "import sympy\nresult = sympy.init_session",
        A,
        objective=_has_result,
        rules=CALC_RULES,
    ),
    Attack(
        "sympy_pprint_flood",
        "import sympy\nfor i in range(10**5):\n    sympy.pprint('x' * 100)",
        A,
        control="output",
        rules=CALC_RULES,
    ),
    # -- monkey-patching the module the host shares -----------------------------------------------
    Attack(
        "sympy_singleton_write",
        "import sympy\nsympy.S.evil = 1",
        A,
        objective=_sympy_attribute("getattr(sympy.S, 'evil', 0) == 1", _undo_evil),
        rules=CALC_RULES,
    ),
    Attack(
        "sympy_class_write",
        "import sympy\nsympy.Symbol.evil = 1",
        A,
        objective=_sympy_attribute("getattr(sympy.Symbol, 'evil', 0) == 1", _undo_evil),
        rules=CALC_RULES,
    ),
    Attack(
        "sympy_cached_symbol_write",
        "import sympy\nx = sympy.Symbol('x')\nx.name = 'y'",
        A,
        objective=_sympy_attribute("sympy.Symbol('x').name == 'y'", _undo_name),
        rules=CALC_RULES,
    ),
    # -- what crosses back is rebuilt in the host: sympy must not compute it there --------------
    Attack(
        "sympy_unevaluated_result",
        "import sympy\nresult = sympy.Pow(10, 10**10, evaluate=False)",
        U,
        control="roundtrip",
        rules=CALC_RULES,
    ),
]
ATTACKS += SECOND_ROUND


# -- second round of legitimate sources: what a code interpreter, a data-analysis agent and a
# calculator evaluate all day, under the generous profile or the one the case names.

#: A calculator's legitimate sources get more time: the first integrate or simplify in a new
#: worker imports sympy's submodules, seconds on a loaded machine.
CALC_LEGIT_RULES = [
    "eval-timeout=30s" if line.startswith("eval-timeout=") else line for line in CALC_RULES
]

#: RULES plus what a code-interpreter tool would add for richer sources.
TOOL_RULES = [
    *RULES,
    "eval-import=json,re",
    "eval-call=staticmethod,classmethod,property,reversed,divmod,bool,chr,ord,hex",
    "eval-magic=__repr__,__eq__,__lt__,__len__,__iter__,__getitem__,__contains__,__index__",
]
#: Rows of a CSV file, as a data-analysis agent passes them.
ROWS = [
    {"city": "Paris", "temp": 21.5, "n": 3},
    {"city": "Oslo", "temp": 12.0, "n": 5},
    {"city": "Paris", "temp": 23.0, "n": 1},
    {"city": "Rome", "temp": 27.5, "n": 2},
]

LEGIT += [
    Legit(
        "rows_group_by_dict",
        (
            "by = {}\n"
            "for r in rows:\n"
            "    by.setdefault(r['city'], []).append(r['temp'])\n"
            "means = {k: sum(v) / len(v) for k, v in by.items()}\n"
            "del r"
        ),
        {
            "by": {"Oslo": [12.0], "Paris": [21.5, 23.0], "Rome": [27.5]},
            "means": {"Oslo": 12.0, "Paris": 22.25, "Rome": 27.5},
            "rows": [
                {"city": "Paris", "n": 3, "temp": 21.5},
                {"city": "Oslo", "n": 5, "temp": 12.0},
                {"city": "Paris", "n": 1, "temp": 23.0},
                {"city": "Rome", "n": 2, "temp": 27.5},
            ],
        },
        mode="exec",
        names={"rows": ROWS},
    ),
    Legit(
        "rows_defaultdict",
        (
            "import collections\n"
            "by = collections.defaultdict(list)\n"
            "for r in rows:\n"
            "    by[r['city']].append(r['n'])\n"
            "totals = {k: sum(v) for k, v in sorted(by.items())}\n"
            "del by, r"
        ),
        {
            "rows": [
                {"city": "Paris", "n": 3, "temp": 21.5},
                {"city": "Oslo", "n": 5, "temp": 12.0},
                {"city": "Paris", "n": 1, "temp": 23.0},
                {"city": "Rome", "n": 2, "temp": 27.5},
            ],
            "totals": {"Oslo": 5, "Paris": 4, "Rome": 2},
        },
        mode="exec",
        names={"rows": ROWS},
    ),
    Legit(
        "rows_counter",
        (
            "import collections\n"
            "c = collections.Counter(r['city'] for r in rows)\n"
            "top = c.most_common(2)\n"
            "n = c['Paris']\n"
            "del c"
        ),
        {
            "n": 2,
            "rows": [
                {"city": "Paris", "n": 3, "temp": 21.5},
                {"city": "Oslo", "n": 5, "temp": 12.0},
                {"city": "Paris", "n": 1, "temp": 23.0},
                {"city": "Rome", "n": 2, "temp": 27.5},
            ],
            "top": [("Paris", 2), ("Oslo", 1)],
        },
        mode="exec",
        names={"rows": ROWS},
    ),
    Legit(
        "rows_statistics",
        (
            "import statistics\n"
            "temps = [r['temp'] for r in rows]\n"
            "med = statistics.median(temps)\n"
            "mean = round(statistics.fmean(temps), 3)\n"
            "q = statistics.quantiles(temps, n=4)"
        ),
        {
            "mean": 21.0,
            "med": 22.25,
            "q": [14.375, 22.25, 26.375],
            "rows": [
                {"city": "Paris", "n": 3, "temp": 21.5},
                {"city": "Oslo", "n": 5, "temp": 12.0},
                {"city": "Paris", "n": 1, "temp": 23.0},
                {"city": "Rome", "n": 2, "temp": 27.5},
            ],
            "temps": [21.5, 12.0, 23.0, 27.5],
        },
        mode="exec",
        names={"rows": ROWS},
    ),
    Legit(
        "rows_max_key",
        "hottest = max(rows, key=lambda r: r['temp'])['city']",
        {
            "hottest": "Rome",
            "rows": [
                {"city": "Paris", "n": 3, "temp": 21.5},
                {"city": "Oslo", "n": 5, "temp": 12.0},
                {"city": "Paris", "n": 1, "temp": 23.0},
                {"city": "Rome", "n": 2, "temp": 27.5},
            ],
        },
        mode="exec",
        names={"rows": ROWS},
    ),
    Legit(
        "itertools_groupby",
        (
            "import itertools\n"
            "groups = {k: len(list(g)) for k, g in itertools.groupby(sorted(r['city"
            "'] for r in rows))}"
        ),
        {
            "groups": {"Oslo": 1, "Paris": 2, "Rome": 1},
            "rows": [
                {"city": "Paris", "n": 3, "temp": 21.5},
                {"city": "Oslo", "n": 5, "temp": 12.0},
                {"city": "Paris", "n": 1, "temp": 23.0},
                {"city": "Rome", "n": 2, "temp": 27.5},
            ],
        },
        mode="exec",
        names={"rows": ROWS},
    ),
    Legit(
        "itertools_combinatorics",
        (
            "import itertools\n"
            "pairs = list(itertools.combinations([1, 2, 3], 2))\n"
            "acc = list(itertools.accumulate([1, 2, 3, 4]))\n"
            "flat = list(itertools.chain.from_iterable([[1], [2, 3]]))\n"
            "prod = list(itertools.product('ab', repeat=2))\n"
            "sl = list(itertools.islice(itertools.count(10), 3))\n"
            "for p in itertools.permutations('abc', 2):\n"
            "    last = p"
        ),
        {
            "acc": [1, 3, 6, 10],
            "flat": [1, 2, 3],
            "last": ("c", "b"),
            "p": ("c", "b"),
            "pairs": [(1, 2), (1, 3), (2, 3)],
            "prod": [("a", "a"), ("a", "b"), ("b", "a"), ("b", "b")],
            "sl": [10, 11, 12],
        },
        mode="exec",
    ),
    Legit(
        "datetime_arithmetic",
        (
            "import datetime\n"
            "d = datetime.date(2024, 1, 31) + datetime.timedelta(days=30)\n"
            "s = d.isoformat()\n"
            "w = d.strftime('%A %d %B')\n"
            "delta = (datetime.datetime(2024, 3, 1, 12) - datetime.datetime(2024, 2"
            ", 28)).total_seconds()\n"
            "p = datetime.date.fromisoformat('2024-05-06').weekday()"
        ),
        {
            "d": date(2024, 3, 1),
            "delta": 216000.0,
            "p": 0,
            "s": "2024-03-01",
            "w": "Friday 01 March",
        },
        mode="exec",
    ),
    Legit(
        "math_isclose_and_friends",
        (
            "import math\n"
            "c = math.isclose(0.1 + 0.2, 0.3)\n"
            "g = math.gcd(48, 18)\n"
            "k = math.comb(10, 3)\n"
            "h = math.hypot(3, 4)\n"
            "l = round(math.log(100, 10), 6)\n"
            "i = math.inf > 10**100"
        ),
        {"c": True, "g": 6, "h": 5.0, "i": True, "k": 120, "l": 2.0},
        mode="exec",
    ),
    Legit(
        "sum_of_generator",
        "sum(x * x for x in range(100) if x % 3 == 0)",
        112761,
    ),
    Legit(
        "class_with_methods",
        (
            "class Stats:\n"
            "    def __init__(self, values):\n"
            "        self.values = list(values)\n"
            "    def mean(self):\n"
            "        return sum(self.values) / len(self.values)\n"
            "    def spread(self):\n"
            "        return max(self.values) - min(self.values)\n"
            "s = Stats([1, 2, 3, 4])\n"
            "m = s.mean()\n"
            "sp = s.spread()\n"
            "del s"
        ),
        {"m": 2.5, "sp": 3},
        mode="exec",
    ),
    Legit(
        "record_class",
        (
            "class Point:\n"
            "    def __init__(self, x, y):\n"
            "        self.x = x\n"
            "        self.y = y\n"
            "    def dist2(self, other):\n"
            "        return (self.x - other.x) ** 2 + (self.y - other.y) ** 2\n"
            "pts = [Point(0, 0), Point(3, 4), Point(1, 1)]\n"
            "far = max(pts, key=lambda p: p.dist2(pts[0]))\n"
            "r = (far.x, far.y)\n"
            "del pts, far"
        ),
        {"r": (3, 4)},
        mode="exec",
    ),
    Legit(
        "sorted_items_by_value",
        (
            "scores = {'a': 3, 'b': 9, 'c': 5}\n"
            "top = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)[:2]\n"
            "best = max(scores, key=scores.get)"
        ),
        {"best": "b", "scores": {"a": 3, "b": 9, "c": 5}, "top": [("b", 9), ("c", 5)]},
        mode="exec",
    ),
    Legit(
        "decimal_precision_50",
        (
            "from decimal import Decimal, getcontext\n"
            "getcontext().prec = 50\n"
            "r = str(Decimal(2).sqrt())"
        ),
        {"r": "1.4142135623730950488016887242096980785696718753769"},
        mode="exec",
    ),
    Legit(
        "decimal_quantize",
        (
            "from decimal import Decimal, ROUND_HALF_UP\n"
            "r = str(Decimal('2.675').quantize(Decimal('0.01'), rounding=ROUND_HALF_UP))"
        ),
        {"ROUND_HALF_UP": "ROUND_HALF_UP", "r": "2.68"},
        mode="exec",
    ),
    Legit(
        "format_specs",
        (
            "a = '{:>10.3f}'.format(3.14159)\n"
            "b = '{:,}'.format(1234567)\n"
            "c = f'{2.5:08.2f}|{\"x\":^5}|{255:#x}'\n"
            "d = '%5.2f%%' % 12.345\n"
            "e = '%(name)s=%(v)d' % {'name': 'n', 'v': 3}\n"
            "f = format(0.125, '.1%')\n"
            "g = '{0[city]} {0[temp]:.1f}'.format(rows[0])"
        ),
        {
            "a": "     3.142",
            "b": "1,234,567",
            "c": "00002.50|  x  |0xff",
            "d": "12.35%",
            "e": "n=3",
            "f": "12.5%",
            "g": "Paris 21.5",
            "rows": [
                {"city": "Paris", "n": 3, "temp": 21.5},
                {"city": "Oslo", "n": 5, "temp": 12.0},
                {"city": "Paris", "n": 1, "temp": 23.0},
                {"city": "Rome", "n": 2, "temp": 27.5},
            ],
        },
        mode="exec",
        names={"rows": ROWS},
    ),
    Legit(
        "transpose_with_star",
        ("m = [[1, 2, 3], [4, 5, 6]]\nt = [list(r) for r in zip(*m)]"),
        {"m": [[1, 2, 3], [4, 5, 6]], "t": [[1, 4], [2, 5], [3, 6]]},
        mode="exec",
    ),
    Legit(
        "star_unpacking",
        (
            "first, *rest = [1, 2, 3]\n"
            "head, *mid, tail = 'abcd'\n"
            "merged = [*rest, *range(3), *(x for x in 'ab')]\n"
            "d = {**{'a': 1}, 'b': 2}\n"
            "for a, *b in [(1, 2, 3), (4, 5)]:\n"
            "    last = (a, b)\n"
            "pairs = [(a, b) for a, *b in ['xy', 'z']]"
        ),
        {
            "a": 4,
            "b": [5],
            "d": {"a": 1, "b": 2},
            "first": 1,
            "head": "a",
            "last": (4, [5]),
            "merged": [2, 3, 0, 1, 2, "a", "b"],
            "mid": ["b", "c"],
            "pairs": [("x", ["y"]), ("z", [])],
            "rest": [2, 3],
            "tail": "d",
        },
        mode="exec",
    ),
    Legit(
        "membership_tests",
        (
            "s = {1, 2}\n"
            "d = {'k': 1}\n"
            "r = [1 in s, 'k' in d, 'b' in 'abc', 5 in range(10), 2.5 in range(3), "
            "3 not in (1, 2), 'x' in map(str, 'xyz'), 1 in iter([1]), 'k' in d.keys"
            "(), 1 in d.values()]"
        ),
        {
            "d": {"k": 1},
            "r": [True, True, True, True, False, True, True, True, True, True],
            "s": {1, 2},
        },
        mode="exec",
    ),
    Legit(
        "enumerate_zip_dict",
        (
            "keys = ['a', 'b']\n"
            "vals = [1, 2]\n"
            "d = dict(zip(keys, vals))\n"
            "idx = [(i, k) for i, k in enumerate(keys, start=1)]\n"
            "for i, (k, v) in enumerate(d.items()):\n"
            "    last = (i, k, v)"
        ),
        {
            "d": {"a": 1, "b": 2},
            "i": 1,
            "idx": [(1, "a"), (2, "b")],
            "k": "b",
            "keys": ["a", "b"],
            "last": (1, "b", 2),
            "v": 2,
            "vals": [1, 2],
        },
        mode="exec",
    ),
    Legit(
        "walrus_in_comprehension",
        ("xs = [1, 2, 3]\nys = [y for x in xs if (y := x * 2) > 2]"),
        {"xs": [1, 2, 3], "y": 6, "ys": [4, 6]},
        mode="exec",
    ),
    Legit(
        "exception_message",
        ("try:\n    int('abc')\nexcept ValueError as e:\n    msg = str(e)"),
        {"msg": "invalid literal for int() with base 10: 'abc'"},
        mode="exec",
    ),
    Legit(
        "any_all_generators",
        ("xs = [3, 5, 7]\nok = all(x % 2 for x in xs) and not any(x > 10 for x in xs)"),
        {"ok": True, "xs": [3, 5, 7]},
        mode="exec",
    ),
    Legit(
        "fraction_arithmetic",
        (
            "from fractions import Fraction\n"
            "f = Fraction(3, 4) + Fraction(1, 6)\n"
            "r = (f.numerator, f.denominator, float(f), f.limit_denominator(3))"
        ),
        {"f": Fraction(11, 12), "r": (11, 12, 0.9166666666666666, Fraction(1, 1))},
        mode="exec",
    ),
    Legit(
        "random_seeded",
        (
            "import random\n"
            "rng = random.Random(42)\n"
            "r = [rng.randint(1, 6) for _ in range(5)]\n"
            "sample = rng.sample(range(100), 3)\n"
            "pick = rng.choice(range(10))\n"
            "del rng"
        ),
        {"pick": 1, "r": [6, 1, 1, 6, 3], "sample": [31, 28, 17]},
        mode="exec",
    ),
    Legit(
        "json_dumps_result",
        (
            "import json\n"
            "s = json.dumps({'b': [1, 2.5, None], 'a': True}, sort_keys=True)\n"
            "back = json.loads(s)"
        ),
        {"back": {"a": True, "b": [1, 2.5, None]}, "s": '{"a": true, "b": [1, 2.5, null]}'},
        mode="exec",
        rules=TOOL_RULES,
    ),
    Legit(
        "re_findall_sub",
        (
            "import re\n"
            "nums = [int(n) for n in re.findall(r'\\d+', 'a1b22c333')]\n"
            "m = re.match(r'(\\w+)@(\\w+)', 'me@host').groups()\n"
            "sub = re.sub(r'\\s+', ' ', 'a   b\\tc')"
        ),
        {"m": ("me", "host"), "nums": [1, 22, 333], "sub": "a b c"},
        mode="exec",
        rules=TOOL_RULES,
    ),
    Legit(
        "property_staticmethod_classmethod",
        (
            "class T:\n"
            "    unit = 'C'\n"
            "    def __init__(self, c):\n"
            "        self.c = c\n"
            "    @property\n"
            "    def f(self):\n"
            "        return self.c * 9 / 5 + 32\n"
            "    @staticmethod\n"
            "    def parse(s):\n"
            "        return T(float(s))\n"
            "    @classmethod\n"
            "    def zero(cls):\n"
            "        return cls(0)\n"
            "r = (T.parse('100').f, T.zero().f, T.unit)"
        ),
        {"r": (212.0, 32.0, "C")},
        mode="exec",
        rules=TOOL_RULES,
    ),
    Legit(
        "dataclass_like_dunders",
        (
            "class P:\n"
            "    def __init__(self, x, y):\n"
            "        self.x, self.y = x, y\n"
            "    def __repr__(self):\n"
            "        return f'P({self.x}, {self.y})'\n"
            "    def __eq__(self, other):\n"
            "        return (self.x, self.y) == (other.x, other.y)\n"
            "    def __lt__(self, other):\n"
            "        return (self.x, self.y) < (other.x, other.y)\n"
            "r = [repr(p) for p in sorted([P(2, 1), P(1, 5)])]\n"
            "same = P(1, 2) == P(1, 2)"
        ),
        {"r": ["P(1, 5)", "P(2, 1)"], "same": True},
        mode="exec",
        rules=TOOL_RULES,
    ),
    Legit(
        "container_class",
        (
            "class Bag:\n"
            "    def __init__(self):\n"
            "        self.items = []\n"
            "    def __len__(self):\n"
            "        return len(self.items)\n"
            "    def __iter__(self):\n"
            "        return iter(self.items)\n"
            "    def __contains__(self, x):\n"
            "        return x in self.items\n"
            "    def __getitem__(self, i):\n"
            "        return self.items[i]\n"
            "b = Bag()\n"
            "b.items.extend([3, 1, 2])\n"
            "r = (len(b), sorted(b), 2 in b, b[0], list(reversed(b.items)))\n"
            "del b"
        ),
        {"r": (3, [1, 2, 3], True, 3, [2, 1, 3])},
        mode="exec",
        rules=TOOL_RULES,
    ),
    Legit(
        "divmod_chr_hex",
        (
            "q, r = divmod(17, 5)\n"
            "s = ''.join(chr(ord('a') + i) for i in range(3))\n"
            "h = hex(255)\n"
            "b = bool([])"
        ),
        {"b": False, "h": "0xff", "q": 3, "r": 2, "s": "abc"},
        mode="exec",
        rules=TOOL_RULES,
    ),
    Legit(
        "sympy_calculus",
        (
            "import sympy\n"
            "x = sympy.Symbol('x')\n"
            "roots = str(sympy.solve(x**2 - 4, x))\n"
            "d = str(sympy.diff(sympy.sin(x) * x, x))\n"
            "i = str(sympy.integrate(x**2, (x, 0, 3)))\n"
            "t = str(sympy.integrate(sympy.sin(x)**2, x))\n"
            "s = str(sympy.simplify(sympy.sin(x)**2 + sympy.cos(x)**2))\n"
            "f = str(sympy.factor(x**2 - 1))\n"
            "e = str(sympy.expand((x + 1)**3))\n"
            "l = str(sympy.limit(sympy.sin(x) / x, x, 0))\n"
            "ser = str(sympy.series(sympy.exp(x), x, 0, 3))\n"
            "q = str(sympy.apart(1 / (x**2 - 1)))\n"
            "del x"
        ),
        {
            "d": "x*cos(x) + sin(x)",
            "e": "x**3 + 3*x**2 + 3*x + 1",
            "f": "(x - 1)*(x + 1)",
            "i": "9",
            "l": "1",
            "q": "-1/(2*(x + 1)) + 1/(2*(x - 1))",
            "roots": "[-2, 2]",
            "s": "1",
            "ser": "1 + x + x**2/2 + O(x**3)",
            "t": "x/2 - sin(x)*cos(x)/2",
        },
        mode="exec",
        rules=CALC_LEGIT_RULES,
    ),
    Legit(
        "sympy_algebra",
        (
            "import sympy\n"
            "a, b = sympy.symbols('a b')\n"
            "det = str(sympy.Matrix([[a, b], [b, a]]).det())\n"
            "r = str(sympy.Rational(1, 3) + sympy.Rational(1, 6))\n"
            "sub = str((a + b).subs(a, 2))\n"
            "val = str(sympy.N(sympy.pi, 10))\n"
            "lat = sympy.latex(a**2)\n"
            "sol = str(sympy.solve([a + b - 3, a - b - 1], [a, b]))\n"
            "del a, b"
        ),
        {
            "det": "a**2 - b**2",
            "lat": "a^{2}",
            "r": "1/2",
            "sol": "{a: 2, b: 1}",
            "sub": "b + 2",
            "val": "3.141592654",
        },
        mode="exec",
        rules=CALC_LEGIT_RULES,
    ),
]


# Classes the source defines may subclass the builtin types and lie through the dunders a
# code-interpreter profile grants (TOOL_RULES): the estimates count with the builtin type's
# own length, the checked methods apply to subclasses, an __index__ is read once.
SOURCE_TYPES_ROUND: list[Attack] = [
    Attack(
        "source_len_lie_repeat",
        "class S(str):\n    def __len__(self):\n        return 0\nlen(S('x' * 1000) * 10**6)",
        M,
        control="memory",
        rules=TOOL_RULES,
    ),
    Attack(
        "source_len_lie_join",
        "class S(str):\n    def __len__(self):\n        return 0\n"
        "x = S('-' * 10000).join(['a'] * 100000)",
        M,
        control="memory",
        rules=TOOL_RULES,
    ),
    Attack(
        "source_list_subclass_extend",
        "class L(list):\n    pass\nL().extend(map(abs, range(10**12)))",
        (T, M),
        control="memory",
        rules=TOOL_RULES,
    ),
    Attack(
        "source_set_subclass_isdisjoint",
        "class S(set):\n    pass\nS().isdisjoint(range(-10**12, 0))",
        T,
        control="cpu",
        rules=TOOL_RULES,
    ),
    Attack(
        "source_str_subclass_center",
        "class S(str):\n    pass\nS('a').center(10**9)",
        M,
        control="memory",
        rules=TOOL_RULES,
    ),
    Attack(
        "source_index_count",
        "class N:\n    def __index__(self):\n        return 10**9\n'a' * N()",
        M,
        control="memory",
        rules=TOOL_RULES,
    ),
]
# A method whose result outgrows its input with no width to estimate: the growth check runs
# at once. It reads the process's *peak* memory, which a process forked from a bigger one
# inherits (a python-sb program started by this test process): the loop after it trips the
# iteration count then.
SOURCE_TYPES_ROUND.append(
    Attack(
        "split_flood",
        "s = 'a ' * 30000000\nparts = s.split()\nfor p in parts:\n    pass",
        (M, T),
        control="memory",
        limit_mib=256,
        rules=TOOL_RULES,
    )
)
# collections' own sequences run str's and list's methods and operators on their data in
# Python code the rewrite never sees: UserString.format walked '{0.__class__.__mro__}'
# unchecked, and center, *, % and + allocated with no estimate. Widths add up over fields.
SOURCE_TYPES_ROUND += [
    Attack(
        "userstring_format_walk",
        "import collections\nresult = collections.UserString('{0.__class__.__mro__}').format(1)",
        A,
        objective=lambda ns: "object" in str(ns["result"]),
    ),
    Attack(
        "userstring_format_map_walk",
        "import collections\nresult = collections.UserString('{x.__class__}').format_map({'x': 1})",
        A,
        objective=lambda ns: "int" in str(ns["result"]),
    ),
    Attack(
        "userstring_center",
        "import collections\nlen(collections.UserString('a').center(10**9))",
        M,
        control="memory",
    ),
    Attack(
        "userstring_repeat",
        "import collections\nlen(collections.UserString('ab') * 10**9)",
        M,
        control="memory",
    ),
    Attack(
        "userstring_percent_width",
        "import collections\nlen(collections.UserString('%01000000000d') % 1)",
        M,
        control="memory",
    ),
    Attack(
        "userlist_repeat",
        "import collections\nlen(collections.UserList([0]) * 10**9)",
        M,
        control="memory",
    ),
    Attack(
        "deque_repeat",
        "import collections\nd = collections.deque([0])\nd *= 10**8",
        M,
        control="memory",
    ),
    Attack(
        "strftime_widths",
        "import datetime\nlen(datetime.date(2024, 1, 1).strftime('%10000Y' * 100000))",
        M,
        control="memory",
    ),
    Attack(
        "date_format_spec_widths",
        "import datetime\nspec = '%10000Y' * 100000\nlen(f'{datetime.date(2024, 1, 1):{spec}}')",
        M,
        control="memory",
    ),
    # one modular power of 8 KB operands: hours of squaring in one C call
    Attack("modular_pow", "pow(3, 10**20000, 10**20000 + 7)", T, control="cpu"),
    # decimal's logarithm at a precision the memory estimate allows: minutes in one C call
    Attack(
        "decimal_ln_precision",
        "from decimal import Decimal, getcontext\ngetcontext().prec = 20000\nDecimal(2).ln()",
        T,
        control="cpu",
    ),
    Attack(
        "decimal_context_exp_precision",
        "import decimal\ndecimal.Context(prec=20000).exp(decimal.Decimal(1))",
        T,
        control="cpu",
    ),
    # a Decimal in fixed point writes every digit of its exponent
    Attack(
        "decimal_fixed_point_format",
        "from decimal import Decimal\nd = Decimal('1e1000000000')\nlen(f'{d:f}')",
        M,
        control="memory",
    ),
    Attack(
        "decimal_fixed_point_str_format",
        "from decimal import Decimal\nlen('{:.2f}'.format(Decimal('1e1000000000')))",
        M,
        control="memory",
    ),
    # a product of many big integers: its size and time were not estimated
    Attack("math_prod_big", "import math\nmath.prod([2**10000] * 3000)", M, control="cpu"),
    # a class the source derives from a granted module's gets its methods checked as well
    Attack(
        "deque_subclass_extend",
        "import collections\nclass D(collections.deque):\n    pass\n"
        "D(maxlen=1).extend(map(abs, range(10**12)))",
        T,
        control="cpu",
    ),
    Attack(
        "counter_subclass_update",
        "import collections\nclass C(collections.Counter):\n    pass\n"
        "C().update(map(abs, range(10**12)))",
        (T, M),
        control="memory",
    ),
    # str.format computes a nested width from an argument inside C: a class of the source's
    # (its __repr__ says '1000000000') or a sympy Integer, not only an int
    Attack(
        "nested_width_from_source_repr",
        "class W:\n    def __repr__(self):\n        return '1000000000'\n"
        "len('{:>{}}'.format(1, W()))",
        EvalCallDenied,
        control="memory",
        rules=TOOL_RULES,
    ),
    Attack(
        "nested_width_from_sympy_integer",
        "import sympy\nlen('{:>{}}'.format(1, sympy.Integer(10**9)))",
        M,
        control="memory",
        rules=CALC_RULES,
    ),
    Attack(
        "format_many_widths", "len(('{:>60000000}' * 20).format(*range(20)))", M, control="memory"
    ),
    Attack(
        "percent_many_widths", "len(('%60000000d' * 20) % tuple(range(20)))", M, control="memory"
    ),
]
SECOND_ROUND += SOURCE_TYPES_ROUND
ATTACKS += SOURCE_TYPES_ROUND


# CPython 3.11 hashes a tuple with no recursion check: one nested 300,000 deep overflows the
# C stack of the process that hashes it. The worker dies (EvalWorkerError) and the host goes
# on; in-process it would be the host that dies (docs/eval.md, Limits).
C_STACK_ROUND: list[Attack] = [
    Attack(
        "nested_tuple_hash",
        "t = ()\nfor i in range(300000):\n    t = (t,)\nlen({t})",
        EvalWorkerError,
        control="crash",
        backends=("worker",),
    ),
]
ATTACKS += C_STACK_ROUND


# Standard modules that open host files, sleep, print or end the process under other names:
# the module is never grantable (a ConfigError naming the line), or the function is never
# available (NEVER_FUNCTIONS). Their controls show plain exec reaching the objective.
STDLIB_ROUND: list[Attack] = [
    Attack(
        "codecs_open_host_file",
        "import codecs\nresult = codecs.open('/etc/hostname').read()",
        A,
        objective=_has_result,
        rules=[*RULES, "eval-import=codecs"],
    ),
    Attack(
        "posixpath_probes_host_files",
        "import posixpath\nresult = posixpath.exists('/etc/hostname')",
        ConfigError,
        objective=lambda ns: ns["result"] is True,
        rules=[*RULES, "eval-import=posixpath"],
    ),
    Attack(
        "argparse_exits_the_host",
        "import argparse\nargparse.ArgumentParser().parse_args(['--nope'])",
        ConfigError,
        control="exit",
        rules=[*RULES, "eval-import=argparse"],
    ),
    Attack(
        "time_sleep",
        "import time\ntime.sleep(3600)",
        A,
        control="cpu",
        rules=[*RULES, "eval-import=time"],
    ),
    Attack(
        "pprint_flood",
        "import pprint\nfor i in range(10**5):\n    pprint.pprint('x' * 100)",
        A,
        control="output",
        rules=[*RULES, "eval-import=pprint"],
    ),
]
ATTACKS += STDLIB_ROUND

LEGIT += [
    Legit(
        "library_subclass_methods",
        "import collections\n"
        "class Tally(collections.Counter):\n"
        "    def top(self):\n"
        "        return self.most_common(1)\n"
        "    def width(self, xs):\n"
        "        return len(xs)\n"
        "t = Tally('aab')\n"
        "top = t.top()\n"
        "r = t.width(range(5))\n"
        "del t",
        {"top": [("a", 2)], "r": 5},
        mode="exec",
    ),
]

LEGIT += [
    Legit(
        "decimal_ln_exp_sqrt",
        "from decimal import Decimal, getcontext\n"
        "getcontext().prec = 60\n"
        "ln2 = str(Decimal(2).ln())[:22]\n"
        "e = str(Decimal(1).exp())[:22]\n"
        "root = str(Decimal(2) ** Decimal('0.5'))[:22]\n"
        "import math\n"
        "p = math.prod([3, 4, 5])",
        {
            "ln2": "0.69314718055994530941",
            "e": "2.71828182845904523536",
            "root": "1.41421356237309504880",
            "p": 60,
        },
        mode="exec",
    ),
]
