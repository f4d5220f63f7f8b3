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

``held`` is the exception ``guarded_eval`` must raise under :data:`RULES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pysandboxes.errors import (
    EvalAttributeDenied,
    EvalCallDenied,
    EvalMemoryError,
    EvalOutputError,
    EvalRecursionError,
    EvalSyntaxRejected,
    EvalTimeout,
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


@dataclass
class Attack:
    name: str
    source: str
    held: Any  # an exception class, or a tuple of them
    control: str = "value"
    objective: Callable[[dict[str, Any]], bool] | None = None
    names: dict[str, Any] = field(default_factory=dict)
    limit_mib: int = 512  # the address space of a memory control


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
    Attack("dict_fromkeys_range", "dict.fromkeys(range(10**12))", T, control="cpu"),
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
