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
- ``state``: run in a child python, then the objective source, in a fresh namespace, sees
  what the attack left behind (``decimal.DefaultContext`` changed).

``held``: the exception ``guarded_eval`` raises under both backends (``worker`` and
``in-process``); ``cls``: the class of issue 25 it belongs to.
"""

from __future__ import annotations

from dataclasses import dataclass

from pysandboxes.errors import EvalMemoryError, EvalTimeout

#: A generous profile (a code-interpreter tool's): the attacks must be held even so.
RULES = [
    "eval-syntax=arith,compare,conditional,loop,comprehension,assign,func,subscript,fstring,"
    "exception,context,import,yield,class",
    "eval-call=len,range,sum,min,max,sorted,list,dict,set,tuple,str,int,float,print,type,"
    "isinstance,abs,round,pow,format,repr,iter,next,map,Exception,ValueError,TypeError,"
    "ZeroDivisionError",
    "eval-attribute=str-methods,list-methods,dict-methods,set-methods,num-methods",
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
    #: For ``state``: the source run afterwards whose value shows what was left behind.
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
        "bare_except",
        "r = 0\ntry:\n    [][1]\nexcept:\n    r = 2\nfinally:\n    r += 1\n",
        {"r": 3},
    ),
]

__all__ = ["ATTACKS", "LEGIT", "RULES", "Attack", "EvalMemoryError"]
