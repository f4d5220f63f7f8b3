"""What evaluated code runs with: the budgets, the checked helpers the rewrite calls, the
builtins it may be granted, and how data crosses in and out.

The namespace of an evaluation never holds a real builtin that could lead out (its
``__builtins__`` is a dict of granted names, checked versions where a builtin can allocate or
loop in C), a real module (a :class:`ModuleView` of the public names of a granted module), a
host object (data is copied in; a host function is wrapped in :class:`HostFunction`) or one of
the guard's own objects by a name the source could write (the helpers live in the builtins
dict under ``_sb_`` names, which the check refuses in a source, and names passed in cannot
start with ``_sb_``).

Budgets are checked where the cost is created:

- iterations: every ``for`` loop, ``while`` loop and comprehension draws from one shared tick
  stream (``itertools.compress`` over ``repeat(True, 256)`` chunks: C speed), and so do the
  C functions that consume an iterable (``sum``, ``sorted``, ``list``, ``str.join``,
  ``list.extend``...); each chunk checks the wall clock, the iteration count and the process's
  peak memory;
- calls of the source's own functions count against ``eval-max-call-depth``;
- allocation: ``+ * ** << %`` on sequences and integers, the methods and constructors that
  allocate from a number (``str.center``, ``int.to_bytes``, ``bytes(n)``, format widths) are
  estimated before they run and refused above ``eval-max-alloc``;
- output: ``print`` counts characters against ``eval-max-output``.

An interruption is a private ``BaseException`` that evaluated code cannot name or catch (the
rewrite turns a bare ``except:`` into ``except Exception:`` and filters every ``except``
clause); once tripped, the evaluation stays tripped, and the caller gets the public error
(:class:`~pysandboxes.errors.EvalTimeout`...) even if library code swallowed it on the way.
"""

from __future__ import annotations

import _string  # type: ignore[import-not-found]  # str.format's own parser
import _thread
import builtins
import collections
import contextlib
import decimal
import fractions
import itertools
import operator
import sys
import time
import unicodedata
import weakref

from pysandboxes.errors import (
    Denial,
    EvalAttributeDenied,
    EvalCallDenied,
    EvalMemoryError,
    EvalOutputError,
    EvalRecursionError,
    EvalTimeout,
    RuleEvalError,
    RuleModuleNotFoundError,
)
from pysandboxes.evalguard import rules as rules_module
from pysandboxes.evalguard.scratch import call as _library_frame

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from pysandboxes.evalguard.rules import EvalRules

if sys.platform != "win32":  # resource is POSIX's
    import resource

    def _peak_bytes() -> int:
        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024

else:  # pragma: no cover - not Linux

    def _peak_bytes() -> int:
        return 0


_CHUNK = 256  # ticks between two checks of the clock and of memory
_local = _thread._local()
_compress = itertools.compress
_repeat = itertools.repeat
_monotonic = time.monotonic
_type = type
_isinstance = isinstance
_len = len
_int = int
_str = str
_bytes = bytes
_getattr = getattr


class _Stop(BaseException):
    """The guard's interruption inside an evaluation (never visible to evaluated code)."""


# -- types that never cross ---------------------------------------------------------------------


def _gen() -> Any:
    yield None


async def _coro() -> None:
    return None


async def _agen() -> Any:
    yield None


def _frame_and_traceback() -> tuple[Any, Any]:
    try:
        raise ValueError
    except ValueError as exc:
        return exc.__traceback__.tb_frame, exc.__traceback__  # type: ignore[union-attr]


_FRAME, _TB = _frame_and_traceback()


def _cell() -> Any:
    value = 0

    def inner() -> int:
        return value

    return inner.__closure__[0]  # type: ignore[index]


_CELL_TYPE = _type(_cell())
_coro_obj = _coro()
_GENERATOR_TYPES: tuple[type, ...] = (_type(_gen()), _type(_agen()), _type(_coro_obj))
_coro_obj.close()
#: Types whose attributes evaluated code never reads, whatever the rules say: frames,
#: tracebacks, code, cells, functions and methods (their ``__globals__``/``__self__`` lead
#: out), modules (evaluated code only sees :class:`ModuleView`), descriptors and class dicts.
SEALED_TYPES: frozenset[type] = frozenset(
    {
        _type(_FRAME),
        _type(_TB),
        _type(_gen.__code__),
        _CELL_TYPE,
        _type(_gen),
        _type(len),
        _type([].append),
        _type(_frame_and_traceback.__get__(1)),
        _type(sys),
        _type(str.join),
        _type(int.__add__),
        _type((1).__add__),
        _type(type.__dict__["__dict__"]),
        _type(_type.__dict__),
        _type(property()),
        _type(BaseException.__dict__["args"]),
        super,
    }
)
#: Values an attribute read never hands out (a module becomes its view).
_NEVER_VALUES: frozenset[type] = frozenset(
    {_type(_FRAME), _type(_TB), _type(_gen.__code__), _CELL_TYPE}
)
del _FRAME, _TB


# -- the state of one evaluation ---------------------------------------------------------------


class State:
    """Budgets and counters of one evaluation (one per call, on the thread running it)."""

    __slots__ = (
        "calls",
        "deadline",
        "depth",
        "error",
        "finished",
        "iterations",
        "lazy",
        "output",
        "peak_base",
        "rules",
        "ticks",
    )

    def __init__(self, rules: EvalRules) -> None:
        self.rules = rules
        self.deadline = _monotonic() + rules.timeout
        self.iterations = 0
        self.calls = 0
        self.depth = 0
        self.output = 0
        self.error: BaseException | None = None
        self.finished = False
        #: Lazy iterators built on others, by id: ``(iterator, how deep it nests)``.
        self.lazy: dict[int, tuple[Any, int]] = {}
        self.peak_base = _peak_bytes()
        # An endless stream of True, drawn in C from 256-long chunks; each chunk is one check.
        self.ticks = itertools.chain.from_iterable(_Chunks(self))

    def trip(self, error: BaseException) -> _Stop:
        """Record ``error`` (the first one wins) and return the interruption to raise."""

        if self.error is None:
            self.error = error
        return _Stop()

    def live(self) -> bool:
        """``True`` while the evaluation may go on; else the interruption, raised again.

        The rewrite calls it (as ``_sb_live``) before the type expression of every ``except``
        clause and at the start of every ``finally`` block: Python evaluates those while an
        exception unwinds, and when that exception is the guard's interruption, code the
        source wrote there (``except (1/0):``, ``finally: print(...); raise ValueError``)
        would replace the interruption or run after it."""

        if self.error is not None:
            raise _Stop()
        if self.finished:
            raise self.trip(RuleEvalError("code of a guarded evaluation ran after it ended"))
        return True

    def check(self) -> None:
        """Clock and memory (called every chunk of ticks and by the costly helpers)."""

        if self.error is not None:
            raise _Stop()
        if self.finished:
            raise self.trip(RuleEvalError("code of a guarded evaluation ran after it ended"))
        if _monotonic() > self.deadline:
            raise self.trip(
                EvalTimeout(
                    f"guarded evaluation ran past {self.rules.key('eval-timeout')}"
                    f" ({self.rules.timeout:g}s)"
                )
            )
        grown = _peak_bytes() - self.peak_base
        if grown > self.rules.max_alloc:
            raise self.trip(
                EvalMemoryError(
                    f"guarded evaluation grew the process by {grown} bytes, more than "
                    f"{self.rules.key('eval-max-alloc')} ({self.rules.max_alloc})"
                )
            )


class _Chunks:
    """The source of the tick stream: every 256 ticks, one check in Python."""

    __slots__ = ("state",)

    def __init__(self, state: State) -> None:
        self.state = state

    def __iter__(self) -> _Chunks:
        return self

    def __next__(self) -> Any:
        state = self.state
        state.check()
        state.iterations += _CHUNK
        if state.iterations > state.rules.max_iterations + _CHUNK:
            raise state.trip(
                EvalTimeout(
                    f"guarded evaluation ran more than {state.rules.max_iterations} iterations "
                    f"({state.rules.key('eval-max-iterations')})"
                )
            )
        return _repeat(True, _CHUNK)


def current() -> State:
    state: State | None = _getattr(_local, "state", None)
    if state is None:
        raise RuleEvalError("a helper of a guarded evaluation was called outside one")
    return state


def current_or_none() -> State | None:
    """The evaluation running on this thread, if any."""

    state: State | None = _getattr(_local, "state", None)
    return state


def set_current(state: State | None) -> State | None:
    previous = _getattr(_local, "state", None)
    _local.state = state
    return previous


def bounded(iterable: Any) -> Any:
    """``iterable``, drawing one tick per item (raises the interruption when over budget)."""

    return _compress(iterable, current().ticks)


class Bounded(itertools.compress):  # type: ignore[type-arg]
    """An iterator handed to evaluated code that draws one tick per item wherever it is
    consumed: what a granted module's function returns (``itertools.count()``, a sympy
    generator) and ``iter(f, sentinel)``. C code consumes such iterators with no tick of its
    own -- ``-1 in count()``, ``set().union(count())``, ``deque().extend(...)``, the
    unpacking ``a, *b = count()`` -- and in-process nothing could stop it. A loop over one
    does not tick again (:func:`loop_iter`)."""

    __slots__ = ()


def loop_iter(iterable: Any, ticks: Any) -> Any:
    """What a ``for`` loop or a comprehension iterates: ``iterable`` drawing ticks (once)."""

    if _type(iterable) is Bounded:
        return iterable
    return _compress(iterable, ticks)


#: Iterators whose items come from a container that is already in memory (finite, sized):
#: ``in`` and unpacking consume them at C speed within the allocation budget.
_FINITE_SAMPLES: tuple[Any, ...] = ([], (), "", "\u20ac", b"", bytearray(), {}, set())
_FINITE_ITERATORS: frozenset[type] = frozenset(
    _type(iter(sample)) for sample in (*_FINITE_SAMPLES, {}.values(), {}.items())
)
#: Containers whose ``in`` test and unpacking cost what their size allows (no C loop that
#: could run unbounded).
_CONTAINERS: frozenset[type] = frozenset(
    {list, tuple, dict, set, frozenset, str, bytes, bytearray}
    | {_type({}.keys()), _type({}.values()), _type({}.items())}
)


class _RangeIn:
    """``x in range(...)``: constant time for an int, a C loop over the whole range for
    anything else (``'a' in range(10**12)``), which is then drawn through the ticks."""

    __slots__ = ("range",)

    def __init__(self, value: range) -> None:
        self.range = value

    def __contains__(self, item: Any) -> bool:
        kind = _type(item)
        if kind is _int or kind is bool:
            return item in self.range
        return item in bounded(self.range)


def container(value: Any) -> Any:
    """The right operand of ``in``/``not in`` (``_sb_in``): itself when its own test is
    bounded (a list, a dict, a ``Counter``, a class with ``__contains__``), else drawn
    through the ticks (``-1 in map(abs, range(10**12))``, ``x in itertools.count()``)."""

    kind = _type(value)
    if kind in _CONTAINERS:
        return value
    if kind is range:
        return _RangeIn(value)
    if kind is Bounded or kind in _FINITE_ITERATORS:
        return value
    if _getattr(kind, "__contains__", None) is not None:
        return value
    return bounded(value)


def unpacked(value: Any) -> Any:
    """The value of a starred expression or of an unpacking with a starred target
    (``[*x]``, ``f(*x)``, ``a, *b = x``): C code consumes it with no tick, so an iterator is
    drawn through the ticks and a ``range`` is counted against the allocation budget."""

    kind = _type(value)
    if kind in _CONTAINERS or kind is Bounded or kind in _FINITE_ITERATORS:
        return value
    if kind is range:
        need(_len(value) * 8, "unpacking a range")
        return value
    return bounded(value)


def starred_items(iterable: Any) -> Any:
    """The items of ``for a, *b in iterable``, each as :func:`unpacked` gives it."""

    return map(unpacked, iterable)


def as_count(value: Any) -> Any:
    """``value`` as the int that Python would use as a count (``'a' * n``, ``s.center(n)``,
    ``bytes(n)``): a sympy ``Integer`` or another object with ``__index__`` is converted
    first, so that the estimate sees the number and the operation uses that same number."""

    kind = _type(value)
    if kind is _int or kind is bool or kind is float:
        return value
    if _getattr(kind, "__index__", None) is None:
        return value
    return operator.index(value)


# -- allocation estimates ---------------------------------------------------------------------


_SIZED_BASES: tuple[type, ...] = (str, bytes, bytearray, list, tuple, dict, set, frozenset)


def _size(value: Any) -> int:
    """The length of a builtin sequence or container as its builtin type counts it: a
    subclass the source defines cannot lie through ``__len__`` (``S('x' * 1000) * 10**6``
    with ``__len__`` returning 0 would be estimated at nothing)."""

    kind = _type(value)
    if kind in _SIZED_BASES:
        return _len(value)
    if _isinstance(value, (collections.UserString, collections.UserList)):
        return _size(value.data)  # what their operators repeat
    if _isinstance(value, collections.deque):
        return collections.deque.__len__(value)
    for base in _SIZED_BASES:
        if _isinstance(value, base):
            return base.__len__(value)  # type: ignore[attr-defined, no-any-return]
    return _len(value)


def _unit(seq: Any) -> int:
    kind = _type(seq)
    if _isinstance(seq, _str):
        return 1 if _str.isascii(seq) else 4
    if kind is _bytes or kind is bytearray:
        return 1
    return 8


#: Sequences of ``collections`` that repeat and concatenate as the builtin ones do.
_USER_STRING = collections.UserString
_LIBRARY_SEQUENCES: tuple[type, ...] = (
    collections.UserString,
    collections.UserList,
    collections.deque,
)
_SEQUENCES = (str, bytes, bytearray, list, tuple, *_LIBRARY_SEQUENCES)
_SMALL = 1 << 62


def need(size: int, what: str) -> None:
    """Refuse an allocation of ``size`` bytes above ``eval-max-alloc``."""

    state = current()
    if state.error is not None:  # tripped, and a library swallowed it: nothing more runs
        raise _Stop()
    if size > state.rules.max_alloc:
        shown = size if size < 10**18 else "10**18"  # a huge int cannot even be printed
        raise state.trip(
            EvalMemoryError(
                f"{what} would allocate about {shown} bytes, more than "
                f"{state.rules.key('eval-max-alloc')} ({state.rules.max_alloc})"
            )
        )
    if size > 1 << 20:
        state.check()


def _int_bytes(value: int) -> int:
    return value.bit_length() // 8 + 1


#: Big integers cost time faster than memory (multiplication is super-linear): an integer
#: result is held to 1/64 of ``eval-max-alloc`` (1 MiB of digits under the default 64 MiB).
_INT_SHARE = 64


def need_int(size: int, what: str) -> None:
    need(size * _INT_SHARE, what)


#: Types whose text (``str``/``repr``/``format`` with no spec) is short or bounded by what is
#: already in memory once: no walk is needed before they are formatted.
_SHORT_TEXT: frozenset[type] = frozenset({_type(None), bool, _int, float, complex, _str})
#: Digits per bit of an int (``str(n)`` has about ``bit_length * 0.302`` of them).
_DIGITS_PER_BIT = 0.302


def text_size(value: Any, depth: int = 0, seen: dict[int, int] | None = None) -> int:
    """About how many characters ``str(value)`` or ``repr(value)`` makes, shared references
    counted as often as the text repeats them: ``str(['x' * 10**6] * 700)`` is 700 MB from
    1 MB of objects. Each distinct container is walked once (its size remembered by ``id``),
    so the estimate costs what the objects are, not what their text would be."""

    kind = _type(value)
    if kind is _str:
        return _len(value) + 2
    if kind is _int:
        return _int(value.bit_length() * _DIGITS_PER_BIT) + 2
    if kind is _bytes or kind is bytearray:
        return 4 * _len(value) + 14  # \xNN per byte at worst
    if kind in _SHORT_TEXT:
        return 24
    if kind is decimal.Decimal:
        if not value.is_finite():
            return 10
        digits = _len(value.as_tuple().digits)
        return digits + 24  # str() of a Decimal is scientific past its digits
    if kind is fractions.Fraction:
        return _int(value.numerator.bit_length() + value.denominator.bit_length()) // 3 + 4
    if depth > 200:
        return 8  # str() itself refuses such nesting (RecursionError)
    if seen is None:
        seen = {}
    key = id(value)
    found = seen.get(key)
    if found is not None:
        return found
    if kind in (list, tuple, set, frozenset) or kind is dict:
        seen[key] = 5  # while it is walked: a cycle prints as [...]
        total = 2
        if kind is dict:
            for k, v in value.items():
                total += text_size(k, depth + 1, seen) + text_size(v, depth + 1, seen) + 4
        else:
            for item in value:
                total += text_size(item, depth + 1, seen) + 2
        seen[key] = total
        return total
    if _isinstance(value, _SEQUENCES) or _isinstance(value, (dict, set, frozenset)):
        size = _size(value.data if _isinstance(value, collections.UserList) else value)
        seen[key] = total = 64 + 32 * size  # a subclass or a library's: a rough bound
        return total
    return 64


def need_text(value: Any, what: str) -> None:
    """Refuse formatting ``value`` as text when that text would exceed ``eval-max-alloc``."""

    if _type(value) in _SHORT_TEXT:
        return
    size = text_size(value)
    if size > 4096:
        need(size, what)


def need_texts(values: Any, what: str) -> None:
    """:func:`need_text` for several values formatted into one string (each counted: one
    big argument used by many fields, ``'{0}{0}{0}'.format(big)``, is counted each time)."""

    total = 0
    seen: dict[int, int] = {}
    for value in values:
        if _type(value) is _str:
            total += _len(value)
        elif _type(value) not in _SHORT_TEXT or _type(value) is _int:
            total += text_size(value, 0, seen)
        else:
            total += 24
    if total > 4096:
        need(total, what)


# The operator helpers run on every checked operation: their first line is the fast path for
# numbers, with the names they use bound as default arguments (local look-ups; evaluated code
# cannot reach these functions to pass other values).


def op_add(a: Any, b: Any, _type: Any = _type, _int: Any = _int, _float: Any = float) -> Any:
    ta = _type(a)
    if (ta is _int and _type(b) is _int) or ta is _float:
        return a + b
    if _isinstance(a, _SEQUENCES) and _isinstance(b, _SEQUENCES):
        need((_size(a) + _size(b)) * max(_unit(a), _unit(b)), "+")
    return a + b


def op_iadd(a: Any, b: Any, _type: Any = _type, _int: Any = _int, _float: Any = float) -> Any:
    ta = _type(a)
    if (ta is _int and _type(b) is _int) or ta is _float:
        return a + b
    if _isinstance(a, _SEQUENCES):
        if _isinstance(b, _SEQUENCES):
            need((_size(a) + _size(b)) * max(_unit(a), _unit(b)), "+=")
        elif _type(a) is list:
            a += bounded(b)
            return a
    a += b
    return a


def _repeat_cost(seq: Any, times: Any, op: str) -> None:
    if _isinstance(times, _int) and times > 1:
        need(_size(seq) * times * _unit(seq), op)


def op_mul(a: Any, b: Any, _type: Any = _type, _int: Any = _int, _small: int = _SMALL) -> Any:
    ta = _type(a)
    tb = _type(b)
    if ta is _int and tb is _int:
        if -_small < a < _small and -_small < b < _small:
            return a * b
        need_int(_int_bytes(a) + _int_bytes(b), "*")
    elif ta is float or tb is float:
        return a * b
    elif _isinstance(a, _SEQUENCES):
        b = as_count(b)
        _repeat_cost(a, b, "*")
    elif _isinstance(b, _SEQUENCES):
        a = as_count(a)
        _repeat_cost(b, a, "*")
    return a * b


def op_imul(a: Any, b: Any) -> Any:
    if _type(a) is list:  # in place, as ``*=`` does
        b = as_count(b)
        _repeat_cost(a, b, "*=")
        a *= b
        return a
    return op_mul(a, b)


def _pow_cost(a: Any, b: Any) -> None:
    """The size of ``a ** b`` for an integer exponent: exact for ints and fractions; for a
    number type the guard does not know (a sympy ``Rational``), at least one bit per unit of
    the exponent (floats overflow, decimals round to their precision)."""

    if not _isinstance(b, _int):
        if _isinstance(a, decimal.Decimal) or _isinstance(b, decimal.Decimal):
            _decimal_cost(decimal.getcontext().prec, "a decimal power")  # exp(b * ln(a))
        if _getattr(_type(b), "__index__", None) is None:
            return
        b = operator.index(b)  # a sympy Integer exponent: 10 ** Integer(10**10)
    n = abs(b)
    if n < 2:
        return
    if _isinstance(a, _int):
        if b < 0 or a in (0, 1, -1):
            return
        need_int(a.bit_length() * n // 8 + 1, "**")
    elif _isinstance(a, fractions.Fraction):
        bits = a.numerator.bit_length() + a.denominator.bit_length()
        need_int(bits * n // 8 + 1, "**")
    elif not _isinstance(a, (float, complex, decimal.Decimal)):
        need_int(n // 8 + 1, "**")


def op_pow(a: Any, b: Any) -> Any:
    _pow_cost(a, b)
    return a**b


def op_lshift(a: Any, b: Any) -> Any:
    b = as_count(b)
    if _isinstance(a, _int) and _isinstance(b, _int) and b > 64 and a:
        need_int((a.bit_length() + b) // 8 + 1, "<<")
    return a << b


def _percent_widths(fmt: Any) -> list[int]:
    """Widths and precisions written in a %-format (``-1`` for a ``*``)."""

    found: list[int] = []
    text = fmt if _type(fmt) is _str else fmt.decode("latin-1")
    i, n = 0, _len(text)
    while True:
        i = text.find("%", i)
        if i < 0 or i + 1 >= n:
            return found
        i += 1
        if text[i] == "(":
            close = text.find(")", i)
            i = n if close < 0 else close + 1
        while i < n and text[i] in "#0- +":
            i += 1
        digits = ""
        while i < n and (text[i].isdigit() or text[i] in ".*"):
            if text[i] == "*":
                found.append(-1)
            elif text[i] == ".":
                if digits:
                    found.append(_int(digits))
                digits = ""
            else:
                digits += text[i]
            i += 1
        if digits:
            found.append(_int(digits))
        i += 1


def op_mod(a: Any, b: Any, _type: Any = _type, _int: Any = _int, _float: Any = float) -> Any:
    ta = _type(a)
    if ta is _int or ta is _float:
        return a % b
    if _isinstance(a, _USER_STRING):
        a = a.data  # what UserString's % formats (its widths are counted below)
    if _isinstance(a, (_str, _bytes, bytearray)):
        total = 0
        for width in _percent_widths(a):
            if width < 0:
                raise current().trip(
                    EvalMemoryError("a '*' width in %-formatting cannot be bounded before it runs")
                )
            total += width  # every field: '%60000000d' * 20 is 1.2 GB of output
        if total > 64:
            need(total, "%-formatting")
        b = _percent_arguments(a, b)
    return a % b


def _percent_arguments(fmt: Any, args: Any) -> Any:
    """The right operand of a %-format, its text counted first: every field formats one
    argument (a tuple of one big string repeated, ``'%s' * 700 % ((big,) * 700)``) or one
    key of a mapping (``'%(a)s' * 700 % {'a': big}``). A mapping that is not a plain dict is
    read once per key here, into one (its ``__getitem__`` could answer the check and the
    formatting differently)."""

    text = fmt if _type(fmt) is _str else fmt.decode("latin-1")
    fields = text.count("%") - 2 * text.count("%%")
    if fields <= 0:
        return args
    kind = _type(args)
    if kind is tuple:
        need_texts(args[:fields], "%-formatting")
        return args
    if "%(" in text and _getattr(kind, "keys", None) is not None:
        names = []
        at = text.find("%(")
        while at >= 0:
            close = text.find(")", at)
            if close < 0:
                break
            names.append(text[at + 2 : close])
            at = text.find("%(", close)
        if kind is not dict:
            args = {name: args[name] for name in names}
        need_texts([args[name] for name in names if name in args], "%-formatting")
        return args
    need_texts((args,), "%-formatting")
    return args


def _digit_runs(text: str) -> int:
    """The sum of the numbers written in ``text`` (every width and precision of a spec: a
    ``datetime`` spec such as ``'%10000Y' * 1000`` has many)."""

    total, run = 0, 0
    for char in text:
        if "0" <= char <= "9":
            run = run * 10 + (ord(char) - 48)
        else:
            total += run
            run = 0
    return total + run


def check_spec(spec: Any) -> None:
    """Refuse a format spec whose widths and precisions add up above the allocation budget."""

    if _type(spec) is _str:
        total = _digit_runs(spec)
        if total > 64:
            need(total, "format width or precision")


def format_value(value: Any, spec: str, conversion: int) -> str:
    """What an f-string field ``{value!c:spec}`` does, with the spec checked first."""

    if conversion == 114:
        need_text(value, "an f-string field")
        value = repr(value)
    elif conversion == 115:
        need_text(value, "an f-string field")
        value = _str(value)
    elif conversion == 97:
        need_text(value, "an f-string field")
        value = ascii(value)
    else:
        need_text(value, "an f-string field")
    check_spec(spec)
    if _isinstance(value, decimal.Decimal):
        decimal_spec_cost(value, spec)
    return format(value, spec)


def format_plain(value: Any) -> Any:
    """An f-string field with no spec (``{x}``): ``value``, its text counted first (a
    shared list's text can be hundreds of times its size)."""

    if _type(value) not in _SHORT_TEXT:
        need_text(value, "an f-string field")
    return value


def join_fields(parts: tuple[Any, ...]) -> str:
    """An f-string of several fields: the text of each, formatted in order, joined once their
    sizes are counted (``f'{big}{big}{big}...'`` repeats one string)."""

    total = 0
    for part in parts:
        total += _len(part)
    if total > 4096:
        need(total, "an f-string")
    return "".join(parts)


def decimal_spec_cost(value: Any, spec: Any) -> None:
    """A ``Decimal`` formatted in fixed point writes every digit of its exponent:
    ``format(Decimal('1e100000000'), 'f')`` is 100 MB from a 5-character spec."""

    if (
        _isinstance(value, decimal.Decimal)
        and _type(spec) is _str
        and spec[-1:] in ("f", "F", "%")
        and value.is_finite()
    ):
        size = abs(value.adjusted()) + _len(value.as_tuple().digits)
        if size > 64:
            need(size, "a decimal in fixed point")


# -- attribute decisions --------------------------------------------------------------------------


def _normal(name: Any) -> str:
    if _type(name) is not _str:
        raise TypeError("attribute name must be a string")
    return name if name.isascii() else unicodedata.normalize("NFKC", name)


class ModuleView:
    """The public names of a granted module, read-only: what ``import`` gives evaluated code."""

    __slots__ = ("_sb_module", "_sb_name")
    _sb_module: Any
    _sb_name: str

    def __init__(self, module: Any, name: str) -> None:
        object.__setattr__(self, "_sb_module", module)
        object.__setattr__(self, "_sb_name", name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise EvalAttributeDenied(f"module {self._sb_name} is read-only in a guarded evaluation")

    def __repr__(self) -> str:
        return f"<module {self._sb_name!r} (guarded view)>"


class HostFunction:
    """A function the caller passed in ``names``: evaluated code can call it, nothing else
    (its attributes, globals and closure stay out of reach)."""

    __slots__ = ("_sb_function", "_sb_rt")
    _sb_function: Any
    _sb_rt: Runtime

    def __init__(self, function: Callable[..., Any], runtime: Runtime) -> None:
        object.__setattr__(self, "_sb_function", function)
        object.__setattr__(self, "_sb_rt", runtime)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        state: State | None = _getattr(_local, "state", None)
        if state is not None and state.error is not None:
            raise _Stop()  # tripped (a library swallowed it): the host's function never runs
        try:
            result = self._sb_function(*args, **kwargs)
        except SystemExit as exc:
            exc._sb_host = True  # type: ignore[attr-defined]  # the host's own: it goes on
            raise
        # What the host returns crosses as its arguments did: data copied, functions wrapped.
        return copy_in(result, self._sb_rt, True, "the result of a host function")

    def __setattr__(self, name: str, value: Any) -> None:
        raise EvalAttributeDenied("a host function is read-only in a guarded evaluation")

    def __repr__(self) -> str:
        return f"<host function {_getattr(self._sb_function, '__name__', '?')}>"


#: Classes created by evaluated code (their instances' public attributes are readable).
_SOURCE_CLASSES: weakref.WeakSet[type] = weakref.WeakSet()


def _defined_by_source(kind: Any, name: str) -> bool:
    """Whether ``name``, looked up on class ``kind``, is found first in a class the source
    defined."""

    if not _isinstance(kind, _type):
        return False
    for klass in kind.__mro__:
        if name in klass.__dict__:
            return klass in _SOURCE_CLASSES
    return False


def _source_made(kind: type) -> bool:
    """Whether ``kind`` or one of its bases is a class created by evaluated code."""

    return any(k in _SOURCE_CLASSES for k in kind.__mro__)


class Runtime:
    """The helpers and builtins of one :class:`EvalRules` (built once, shared by its calls)."""

    def __init__(self, rules: EvalRules) -> None:
        self.rules = rules
        self.decisions: dict[tuple[type, str] | None, Any] = {}
        self.views: dict[str, ModuleView] = {}
        self.group_types = [rules_module.ATTRIBUTE_GROUPS[g] for g in rules.attribute_groups]
        self.module_tops = frozenset(n.partition(".")[0] for n in rules.imports)
        self.wrapped_types, self.real_types = _type_wrappers(self)
        self.builtins = self._builtins()

    # -- attributes ------------------------------------------------------------------------

    def refuse_attribute(self, obj: Any, name: str, why: str) -> _Stop:
        suggestion = None
        if not name.startswith("_") and why.endswith("not granted"):
            suggestion = f"{self.rules.key('eval-attribute')}={name}"
        denial = Denial("eval", name, None, None, suggestion, why)
        error = EvalAttributeDenied(
            f"attribute {name!r} of {_type(obj).__name__} refused: {why}"
            + (f"; add '{suggestion}'" if suggestion else ""),
            denial=denial,
        )
        state: State | None = _getattr(_local, "state", None)
        if state is None:
            raise error
        return state.trip(error)

    def _module_of(self, kind: type) -> bool:
        module = _getattr(kind, "__module__", None)
        return _type(module) is _str and module.partition(".")[0] in self.module_tops

    def decide(self, obj: Any, name: str) -> str | None:
        """``None`` when ``obj.name`` may be read, else why not (by the object's type)."""

        rules = self.rules
        kind = _type(obj)
        if name.startswith("_sb_"):
            return "names starting with _sb_ belong to the guard"
        if kind in SEALED_TYPES:
            return f"attributes of {kind.__name__} objects are never readable"
        if name.startswith("__") and name.endswith("__") and _len(name) > 4:
            if name in rules.magic and name not in rules_module.NEVER_MAGIC:
                return None
            return "dunder attributes need eval-magic"
        if name in rules.denied_attributes:
            return "denied by an eval-attribute DENY line"
        if kind in _GENERATOR_TYPES and name[:3] in ("gi_", "cr_", "ag_"):
            return "generator internals are never readable"
        if name.startswith("_"):
            return None if name in rules.attributes else "private attributes are not granted"
        if name in rules.attributes or kind is super:
            return None  # super(): the public methods of the source's own base classes
        if _isinstance(obj, BaseException) and name == "args":
            return None
        target = obj if _isinstance(obj, _type) else kind
        if target is obj and not any(name in k.__dict__ for k in target.__mro__):
            # a name a class gets from its metaclass (mro, register): not the class's API
            return "attributes of a class's metaclass are not granted"
        for types, names in self.group_types:
            if name in names and (target in types or _isinstance(obj, types)):
                return None
        if _source_made(target):
            return None
        if self._module_of(target):
            return None
        return "not granted"

    def getattr(self, obj: Any, name: str) -> Any:
        """``obj.name`` for evaluated code (the rewrite of every attribute read)."""

        kind = _type(obj)
        if kind is ModuleView:
            return self.module_attribute(obj, name)
        if kind is _Package:
            return self.view(f"{obj._sb_name}.{_normal(name)}")
        real = self.real_types.get(id(obj))
        if real is not None:  # dict.fromkeys: the checked constructor stands for its type
            obj, kind = real, _type(real)
        key = (kind, name) if kind is not _type else None
        verdict: Any = self.decisions.get(key) if key is not None else None
        if verdict is None:
            why = self.decide(obj, _normal(name))
            if why is not None:
                raise self.refuse_attribute(obj, name, why)
            target = obj if kind is _type else kind
            target_class = _isinstance(target, _type)
            if (
                kind in _CHECKED_KINDS
                or (kind is _type and obj in _CHECKED_KINDS)
                # a subclass the source made of list, str, set...: the same checked methods
                or (target_class and issubclass(target, _CHECKED_BASES))
            ):
                verdict = _CHECKED.get(name, True)
            elif target_class and issubclass(target, _LIBRARY_SEQUENCES) and name in _CHECKED:
                # UserString, UserList, deque (and the source's subclasses of them) run
                # str's and list's methods on their data: the same checks
                verdict = _CHECKED[name]
            elif name == "strftime" and (
                _isinstance(obj, _DATE_TYPES) or (target_class and issubclass(target, _DATE_TYPES))
            ):
                verdict = _strftime
            elif (
                self._module_of(target)
                or (target_class and any(self._module_of(k) for k in target.__mro__[1:]))
            ) and not _defined_by_source(target, name):
                # a granted module's object, or one of a class the source derived from a
                # granted module's (class D(deque)): its methods as library calls (not the
                # methods the source wrote itself: they get their arguments as given)
                verdict = _MEMBER
            else:
                verdict = True
            if key is not None:
                if len(self.decisions) > 4096:  # keys hold types (the source's classes too)
                    self.decisions.clear()
                self.decisions[key] = verdict
        value = _getattr(obj, name)
        vk = _type(value)
        if verdict is not True:
            if verdict is not _MEMBER:
                return verdict(self, obj, value)
            if vk in _METHOD_TYPES:
                # deque().extend(count()), Counter().update(...), sympy's methods: lazy
                # arguments draw ticks, lazy results too, and the call's frame is scratch
                return _LibraryCall(value, self)
        if vk in _NEVER_VALUES:
            raise self.refuse_attribute(obj, name, f"it is a {vk.__name__}")
        if vk is _type(sys):
            return self.view(value.__name__)
        if vk is _type and value in self.wrapped_types:
            return self.wrapped_types[value]
        return value

    def module_attribute(self, view: ModuleView, name: str) -> Any:
        name = _normal(name)
        module_name = view._sb_name
        if name.startswith("_"):
            raise self.refuse_attribute(view, name, "private names of modules are not readable")
        if f"{module_name}.{name}" in self.rules.denied_calls:
            raise self.refuse_attribute(view, name, "denied by an eval-call DENY line")
        why = rules_module.never_function(module_name, name)
        if why is not None:
            raise self.refuse_attribute(view, name, why)
        try:
            value = _getattr(view._sb_module, name)
        except AttributeError:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}") from None
        if _type(value) is _type(sys):
            full = f"{module_name}.{name}"
            if full in self.rules.imports:
                return self.view(full)
            raise self.refuse_attribute(view, name, f"module {full} is not granted by eval-import")
        if _type(value) in _NEVER_VALUES:
            raise self.refuse_attribute(view, name, f"it is a {_type(value).__name__}")
        if _isinstance(value, _type):
            return self.library_class(value)
        if callable(value):
            return _LibraryCall(value, self)
        return value

    def library_class(self, cls: type) -> Any:
        """A class of a granted module as evaluated code sees it: calling it goes through
        :class:`_LibraryCall` (``collections.Counter(range(10**12))`` draws ticks,
        ``decimal.Context(prec=...)`` is checked); ``type()``, ``isinstance``, ``except`` and
        class bases translate it back. Exception classes stay themselves."""

        found = self.wrapped_types.get(cls)
        if found is not None:
            return found
        if issubclass(cls, BaseException):
            return cls
        proxy = _LibraryCall(cls, self)
        self.wrapped_types[cls] = proxy
        self.real_types[id(proxy)] = cls
        return proxy

    def view(self, name: str) -> ModuleView:
        found = self.views.get(name)
        if found is None:
            if name not in self.rules.imports:
                raise self.refuse_attribute(None, name, "module not granted by eval-import")
            import importlib

            found = self.views[name] = ModuleView(importlib.import_module(name), name)
        return found

    def setter(self, obj: Any) -> _Setter:
        return _Setter(self, obj)

    def setattr_check(self, obj: Any, name: str, value: Any) -> None:
        name = _normal(name)
        kind = _type(obj)
        source_object = _source_made(kind)
        if name.startswith("__") and name.endswith("__"):
            allowed = source_object and name in self.rules.magic
        elif name.startswith("_"):
            allowed = source_object and name in self.rules.attributes
        else:
            allowed = source_object or (
                self._module_of(kind)
                and kind not in (ModuleView, _type)
                and kind not in SEALED_TYPES
                and _settable(kind, name)
            )
        if not allowed:
            raise self.refuse_attribute(obj, name, "attributes of this object cannot be written")
        if name == "prec" and _isinstance(value, _int) and value > 64:
            need_int(value, "decimal precision")

    # -- imports and exceptions ------------------------------------------------------------

    def import_module(self, name: str, bind: str) -> ModuleView | _Package:
        """``import name`` binds the view of ``bind`` (the top name, or ``name`` with ``as``)."""

        if name not in self.rules.imports:
            raise RuleModuleNotFoundError(
                f"Module named {name!r} is not allowed by an eval-import rule", name=name
            )
        self.view(name)
        return self.view(bind) if bind in self.rules.imports else _Package(self, bind)

    def import_from(self, module: str, name: str) -> Any:
        return self.module_attribute(self.view(module), name)

    def exception_filter(self, kinds: Any) -> Any:
        if _type(kinds) is tuple:
            return tuple(self.exception_filter(k) for k in kinds)
        kinds = self.real_types.get(id(kinds), kinds)
        if not (_isinstance(kinds, _type) and issubclass(kinds, Exception)):
            raise TypeError("catching classes that do not inherit from Exception is not allowed")
        return kinds

    def class_base(self, base: Any) -> Any:
        base = self.real_types.get(id(base), base)
        if not _isinstance(base, _type) or issubclass(base, _type):
            raise self.refuse_call("class", "a base that is not a class, or a metaclass")
        return base

    def register_class(self, cls: type) -> type:
        if _type(cls) is not _type:
            raise self.refuse_call("class", "classes with a metaclass")
        _SOURCE_CLASSES.add(cls)
        return cls

    # -- functions of the source -----------------------------------------------------------

    def function(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """Wrap a function or lambda of the source: counts calls and depth."""

        state = current()
        limit = self.rules.max_call_depth
        key = self.rules.key("eval-max-call-depth")

        def call(*args: Any, **kwargs: Any) -> Any:
            if state.finished:
                raise RuleEvalError("a function of a guarded evaluation called after it ended")
            if state.error is not None:
                raise _Stop()
            state.calls += 1
            if not state.calls & 255:
                state.check()
            if state.depth >= limit:
                raise state.trip(
                    EvalRecursionError(f"evaluated functions nested deeper than {limit} ({key})")
                )
            state.depth += 1
            try:
                return function(*args, **kwargs)
            finally:
                state.depth -= 1

        return call

    # -- builtins --------------------------------------------------------------------------

    def _builtins(self) -> dict[str, Any]:
        rules = self.rules
        table: dict[str, Any] = {}
        for name in rules.calls:
            if name in rules_module.NEVER_BUILTINS or "." in name:
                continue
            if name in _WRAPPED_NAMES:
                table[name] = self.wrapped_types[_getattr(builtins, name)]
            elif name in _SAFE_BUILTINS:
                table[name] = _SAFE_BUILTINS[name]
            else:
                real: Any = _getattr(builtins, name, None)
                if _isinstance(real, _type) and issubclass(real, Exception):
                    table[name] = real
        if "type" in table:
            table["type"] = self._type_builtin
        if "ClassDef" in rules.nodes:
            table["__build_class__"] = builtins.__build_class__
        for name in ("getattr", "hasattr", "isinstance", "issubclass", "print"):
            if name in table:
                table[name] = _getattr(self, "_b_" + name)
        table["__import__"] = _interpreter_import
        table.update(
            _sb_ga=self.getattr,
            _sb_w=self.setter,
            _sb_add=op_add,
            _sb_iadd=op_iadd,
            _sb_mul=op_mul,
            _sb_imul=op_imul,
            _sb_pow=op_pow,
            _sb_lshift=op_lshift,
            _sb_mod=op_mod,
            _sb_fmt=format_value,
            _sb_fv=format_plain,
            _sb_fjoin=join_fields,
            _sb_fn=self.function,
            _sb_cls=self.register_class,
            _sb_base=self.class_base,
            _sb_exc=self.exception_filter,
            _sb_Exception=Exception,
            _sb_import=self.import_module,
            _sb_from=self.import_from,
            _sb_compress=loop_iter,
            _sb_in=container,
            _sb_star=unpacked,
            _sb_stars=starred_items,
            _sb_tick=_tick,
            _sb_type=_type,
            _sb_int=_int,
        )
        return table

    def refuse_call(self, target: str, why: str) -> _Stop:
        denial = Denial("eval", target, None, None, None, why)
        error = EvalCallDenied(f"{target} refused: {why}", denial=denial)
        state: State | None = _getattr(_local, "state", None)
        if state is None:
            raise error
        return state.trip(error)

    def _type_builtin(self, *args: Any) -> Any:
        if _len(args) != 1:
            raise self.refuse_call("type", "type() with three arguments builds a class")
        # a checked constructor (list, str, int...) stands for its type: type(type(1)) is
        # the metaclass, not the function type
        kind = _type(self.real_types.get(id(args[0]), args[0]))
        if issubclass(kind, _type):
            raise self.refuse_call("type", "the type of a class (a metaclass) is not handed out")
        if kind in _GUARD_TYPES:
            raise self.refuse_call("type", "the guard's own classes are not handed out")
        return self.wrapped_types.get(kind, kind)

    def _b_getattr(self, obj: Any, name: Any, *default: Any) -> Any:
        if default and self.decide(obj, _normal(name)) is None:
            try:
                return self.getattr(obj, name)
            except AttributeError:
                return default[0]
        return self.getattr(obj, name)

    def _b_hasattr(self, obj: Any, name: Any) -> bool:
        if _type(obj) is not ModuleView and self.decide(obj, _normal(name)) is not None:
            return False
        try:
            self.getattr(obj, name)
        except AttributeError:
            return False
        return True

    def _b_isinstance(self, obj: Any, kinds: Any) -> bool:
        return _isinstance(obj, self._real(kinds))

    def _b_issubclass(self, cls: Any, kinds: Any) -> bool:
        return issubclass(self.real_types.get(id(cls), cls), self._real(kinds))

    def _real(self, kinds: Any) -> Any:
        if _type(kinds) is tuple:
            return tuple(self._real(k) for k in kinds)
        return self.real_types.get(id(kinds), kinds)

    def _b_print(self, *args: Any, sep: Any = " ", end: Any = "\n", flush: bool = False) -> None:
        state = current()
        if state.error is not None:  # tripped (a library swallowed it): nothing is printed
            raise _Stop()
        for a in args:
            if _type(a) not in _SHORT_TEXT:
                need_text(a, "print()")
        text = (" " if sep is None else _str(sep)).join(_str(a) for a in args) + (
            "\n" if end is None else _str(end)
        )
        state.output += _len(text)
        if state.output > state.rules.max_output:
            raise state.trip(
                EvalOutputError(
                    f"guarded evaluation printed more than {state.rules.max_output} characters "
                    f"({state.rules.key('eval-max-output')})"
                )
            )
        sys.stdout.write(text)
        if flush:
            sys.stdout.flush()


def _tick() -> None:
    """One tick (an ``async for`` iteration, where compress cannot be used)."""

    next(current().ticks)


#: Descriptors through which a granted module's object may be written: C getters/setters
#: (``decimal.Context.prec``) and properties. Not slots, and not new entries of an
#: instance's ``__dict__``: those would monkey-patch objects the module shares with the
#: host (``sympy.S.Pi = 3``, ``Symbol('x').name = ...`` on sympy's cached symbol, a
#: class attribute through its metaclass).
_SETTABLE_DESCRIPTORS: frozenset[type] = frozenset({_type(decimal.Context.prec), property})


def _settable(kind: type, name: str) -> bool:
    for klass in kind.__mro__:
        found = klass.__dict__.get(name)
        if found is not None:
            return _type(found) in _SETTABLE_DESCRIPTORS
    return False


class _Setter:
    """``obj.name = value`` is rewritten ``_sb_w(obj)['name'] = value`` (works in every target
    position: tuple unpacking, ``for`` targets, ``with ... as``, augmented assignment)."""

    __slots__ = ("_sb_obj", "_sb_rt")
    _sb_obj: Any
    _sb_rt: Runtime

    def __init__(self, runtime: Runtime, obj: Any) -> None:
        object.__setattr__(self, "_sb_rt", runtime)
        object.__setattr__(self, "_sb_obj", obj)

    def __getitem__(self, name: str) -> Any:
        return self._sb_rt.getattr(self._sb_obj, name)

    def __setitem__(self, name: str, value: Any) -> None:
        self._sb_rt.setattr_check(self._sb_obj, name, value)
        setattr(self._sb_obj, name, value)

    def __delitem__(self, name: str) -> None:
        self._sb_rt.setattr_check(self._sb_obj, name, None)
        delattr(self._sb_obj, name)


class _Package:
    """What ``import a.b`` binds to ``a`` when only ``a.b`` is granted: the granted
    submodules, by attribute."""

    __slots__ = ("_sb_name", "_sb_rt")
    _sb_name: str
    _sb_rt: Runtime

    def __init__(self, runtime: Runtime, name: str) -> None:
        object.__setattr__(self, "_sb_rt", runtime)
        object.__setattr__(self, "_sb_name", name)


class _LibraryCall:
    """A function of a granted module, as evaluated code calls it: lazy iterables handed to it
    draw ticks (``math.prod(range(10**10))``, ``statistics.mean(map(...))``), a few functions
    whose cost follows from a number are checked first, and what it returns is screened."""

    __slots__ = ("_sb_function", "_sb_rt")
    _sb_function: Any
    _sb_rt: Runtime

    def __init__(self, function: Callable[..., Any], runtime: Runtime) -> None:
        object.__setattr__(self, "_sb_function", function)
        object.__setattr__(self, "_sb_rt", runtime)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        function = self._sb_function
        qualname = _getattr(function, "__qualname__", "")
        given = args
        for keyword in kwargs:
            if keyword.startswith("_"):
                # a library's private parameter is its own API, never the public one the
                # rules grant: Fraction(n, d, _normalize=False) skips the check of its values
                raise self._sb_rt.refuse_call(
                    f"{qualname or 'a library function'}({keyword}=...)",
                    "private keyword arguments of library functions are not granted",
                )
        if qualname in _INDEXING and _getattr(function, "__module__", None) == "random":
            # random.sample(range(10**6), 3) indexes its population: a range stays one
            args = tuple(
                a if _type(a) is range or _type(a) not in _LAZY else bounded(a) for a in args
            )
        else:
            args = tuple(bounded(a) if _type(a) in _LAZY else a for a in args)
        cost = _LIBRARY_COSTS.get(qualname)
        if cost is not None and _getattr(function, "__module__", None) in _COST_MODULES:
            cost(args, kwargs)
        if qualname in _DECIMAL_SLOW:
            context = _decimal_context_of(function, qualname, kwargs)
            _decimal_cost(_getattr(context, "prec", 0), qualname)
            if qualname == "Context.power" and (_len(args) > 2 or "modulo" in kwargs):
                modpow_cost(
                    args[1] if _len(args) > 1 else kwargs.get("b"),
                    kwargs.get("modulo", args[2] if _len(args) > 2 else None),
                )
        elif qualname in _DECIMAL_SQRT:
            context = _decimal_context_of(function, qualname, kwargs)
            _sqrt_cost(_getattr(context, "prec", 0), qualname)
        elif qualname in _DECIMAL_TO_INT:
            decimal_int_cost(_getattr(function, "__self__", None), qualname)
        elif qualname == "prod" and args and _getattr(function, "__module__", None) == "math":
            items = args[0] if _type(args[0]) in (list, tuple) else list(args[0])
            bits = 0
            for item in items:
                if _isinstance(item, _int):
                    bits += item.bit_length()
            need_int(bits // 8 + 1, "math.prod")
            args = (items, *args[1:])
        value: Any = kwargs.get("prec")
        if _isinstance(value, _int) and value > 64:
            need_int(value, "decimal precision")
        result = _library_frame(function, args, kwargs)
        kind = _type(result)
        if kind is _type(sys):
            return self._sb_rt.view(result.__name__)
        if _is_iterator(kind):
            made = Bounded(result, current().ticks)
            return lazy_made(made, (*given, *kwargs.values()), 2)
        return result

    def __setattr__(self, name: str, value: Any) -> None:
        raise EvalAttributeDenied("a library function is read-only in a guarded evaluation")

    def __repr__(self) -> str:
        return repr(self._sb_function)


#: Digits of precision above which decimal's transcendental functions are refused: their time
#: grows with the square of the precision and more (ln at 10,000 digits: 6 s here), in one C
#: call; square roots and arithmetic stay allowed up to the allocation budget.
DECIMAL_SLOW_PRECISION = 2000
_DECIMAL_SLOW = frozenset(
    f"{owner}.{name}"
    for owner in ("Decimal", "Context")
    for name in ("ln", "log10", "exp", "power")
)


def _decimal_cost(precision: Any, what: str) -> None:
    if _isinstance(precision, _int) and precision > DECIMAL_SLOW_PRECISION:
        state = current()
        raise state.trip(
            EvalTimeout(
                f"{what} at {precision} digits would run past "
                f"{state.rules.key('eval-timeout')} in one call (at most "
                f"{DECIMAL_SLOW_PRECISION} digits for ln, log10, exp and non-integer powers)"
            )
        )


_ITERATOR_TYPES: dict[type, bool] = {}
#: The verdict of an attribute of a granted module's object (``Runtime.getattr``).
_MEMBER = object()
#: What a method read on an object gives: called through :class:`_LibraryCall` when the
#: object belongs to a granted module.
_METHOD_TYPES: frozenset[type] = frozenset(
    {_type([].append), _type(_frame_and_traceback.__get__(1)), _type(_gen)}
)


def _is_iterator(kind: type) -> bool:
    """Whether what a library returned is an iterator C code could consume with no tick
    (``itertools.count()``, a generator), not an iterator over a container in memory."""

    found = _ITERATOR_TYPES.get(kind)
    if found is None:
        found = (
            kind not in _FINITE_ITERATORS
            and kind is not Bounded
            and _getattr(kind, "__next__", None) is not None
        )
        if _len(_ITERATOR_TYPES) < 4096:
            _ITERATOR_TYPES[kind] = found
    return found


def _factorial_cost(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if args and _isinstance(args[0], _int) and args[0] > 2000:
        n = args[0]
        need_int(n * n.bit_length() // 8, "math.factorial")


def _comb_cost(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if args and _isinstance(args[0], _int) and args[0] > 2000:
        n = args[0]
        need_int(n * n.bit_length() // 8, "math.comb/perm")


def _bytes_cost(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if args and _isinstance(args[0], _int):
        need(args[0], "random bytes")


def _bits_cost(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if args and _isinstance(args[0], _int):
        need_int(args[0] // 8, "random bits")


def _k_cost(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    k = kwargs.get("k", args[1] if _len(args) > 1 and _isinstance(args[1], _int) else 1)
    if _isinstance(k, _int):
        need(k * 8, "random.choices/sample(k=...)")


#: Bit operations a gcd may cost (the bits of its two largest arguments multiplied): about
#: half a second here, as for a modular power.
_GCD_BUDGET = _MODPOW_BUDGET = 1 << 37


def _gcd_cost(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """``math.gcd`` of huge ints is quadratic in one C call; ``math.lcm`` multiplies too, its
    result as long as all its arguments together (``lcm(*range(1, 10**5))``)."""

    bits = sorted(a.bit_length() for a in args if _isinstance(a, _int))
    if _len(bits) < 2:
        return
    cost = bits[-1] * bits[-2]
    state = current()
    if cost > _GCD_BUDGET:
        raise state.trip(
            EvalTimeout(
                f"a gcd of {bits[-1]}-bit and {bits[-2]}-bit integers would run past "
                f"{state.rules.key('eval-timeout')} in one call"
            )
        )


def _lcm_cost(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    total = 0
    for a in args:
        if _isinstance(a, _int):
            total += a.bit_length()
    need_int(total // 8 + 1, "math.lcm")
    if total * total > _GCD_BUDGET * 8:
        state = current()
        raise state.trip(
            EvalTimeout(
                f"math.lcm of {_len(args)} integers ({total} bits together) would run past "
                f"{state.rules.key('eval-timeout')} in one call"
            )
        )


def _decimal_int_arg(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if args:
        decimal_int_cost(args[0], "an integer from a Decimal")


def _fraction_cost(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """``Fraction(a, b)`` normalises with a gcd (quadratic for huge ints); from a Decimal or
    from text it computes the power of ten its exponent says (``Fraction('1e99999999')``)."""

    if _len(args) >= 2:
        a, b = args[0], args[1]
        if _type(a) is _int and _type(b) is _int and -_SMALL < a < _SMALL and -_SMALL < b < _SMALL:
            return  # the common case: a gcd of machine-sized ints
        _gcd_cost(args[:2], kwargs)
    elif args:
        value = args[0]
        if _isinstance(value, decimal.Decimal) and value.is_finite():
            digits = abs(value.adjusted()) + _len(value.as_tuple().digits)
            int_digits_cost(digits, "a Fraction from a Decimal")
        elif _isinstance(value, _str):
            head, _e, exponent = value.strip().lower().rpartition("e")
            if head and exponent.lstrip("+-").isdigit() and _len(exponent) < 30:
                need_int(_int(abs(_int(exponent)) * 3.33) // 8 + 1, "a Fraction from text")


def _sqrt_cost(precision: Any, what: str) -> None:
    if _isinstance(precision, _int) and precision > DECIMAL_SQRT_PRECISION:
        state = current()
        raise state.trip(
            EvalTimeout(
                f"{what} at {precision} digits would run past "
                f"{state.rules.key('eval-timeout')} in one call (at most "
                f"{DECIMAL_SQRT_PRECISION} digits for a square root)"
            )
        )


#: Digits of precision above which a decimal square root is refused (20,000: 0.13 s here;
#: 300,000: 4 s, in one C call).
DECIMAL_SQRT_PRECISION = 20_000


#: Functions of ``random`` that index their population (a ``range`` is not drawn through).
_INDEXING = frozenset({"Random.sample", "Random.choice", "Random.choices"})

#: Library functions whose cost follows from a number argument, by qualified name (the
#: module is checked against ``_COST_MODULES``).
_LIBRARY_COSTS: dict[str, Callable[[tuple[Any, ...], dict[str, Any]], None]] = {
    "factorial": _factorial_cost,
    "comb": _comb_cost,
    "perm": _comb_cost,
    "Random.randbytes": _bytes_cost,
    "Random.getrandbits": _bits_cost,
    "Random.choices": _k_cost,
    "Random.sample": _k_cost,
    "gcd": _gcd_cost,
    "lcm": _lcm_cost,
    "floor": _decimal_int_arg,
    "ceil": _decimal_int_arg,
    "trunc": _decimal_int_arg,
    "Fraction": _fraction_cost,
    "Fraction.from_decimal": _fraction_cost,
}
_COST_MODULES = ("math", "decimal", "random", "fractions", None)
#: Methods of a Decimal that compute an int from it.
_DECIMAL_TO_INT = frozenset(
    {"Decimal.as_integer_ratio", "Decimal.__int__", "Decimal.__round__", "Decimal.__trunc__"}
)
_DECIMAL_SQRT = frozenset({"Decimal.sqrt", "Context.sqrt"})

_LAZY: frozenset[Any] = frozenset(
    {range, map, filter, zip, enumerate, reversed, _type(_gen()), _type(iter(())), _type(iter([]))}
    | {
        _getattr(itertools, name)
        for name in (
            "count",
            "cycle",
            "repeat",
            "chain",
            "product",
            "permutations",
            "combinations",
            "combinations_with_replacement",
            "accumulate",
            "islice",
            "starmap",
            "zip_longest",
            "takewhile",
            "dropwhile",
            "filterfalse",
            "groupby",
            "compress",
            "pairwise",
        )
        if hasattr(itertools, name)
    }
)
_FUNCTION_TYPES: frozenset[type] = frozenset({_type(len), _type(_gen), _type(str.join)})
_GUARD_TYPES: frozenset[type] = frozenset(
    {ModuleView, HostFunction, _LibraryCall, _Setter, _Package, State}
)
_CHECKED_KINDS: frozenset[type] = frozenset(
    {_str, _bytes, bytearray, list, tuple, _int, bool, dict, set, frozenset}
)
_CHECKED_BASES: tuple[type, ...] = tuple(_CHECKED_KINDS)


# -- methods whose cost follows from an argument -------------------------------------------------


def _width(index: int) -> Callable[[Runtime, Any, Any], Any]:
    def checked(runtime: Runtime, obj: Any, method: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            args = tuple(as_count(a) for a in args)
            if _len(args) > index and _isinstance(args[index], _int):
                need(args[index] * _unit(obj), f"{_type(obj).__name__} method")
            return method(*args, **kwargs)

        return call

    return checked


def _expandtabs(runtime: Runtime, obj: Any, method: Any) -> Any:
    def call(tabsize: int = 8) -> Any:
        if _isinstance(tabsize, _int) and tabsize > 1:
            need(_size(obj) * tabsize * _unit(obj), "expandtabs")
        return method(tabsize)

    return call


def _replace(runtime: Runtime, obj: Any, method: Any) -> Any:
    def call(old: Any, new: Any, count: int = -1) -> Any:
        if _isinstance(new, _SEQUENCES) and _size(new) > 1:
            times = _size(obj) + 1 if not old else _size(obj) // max(1, _size(old)) + 1
            if count >= 0:
                times = min(times, count)
            need(_size(obj) + times * _size(new) * _unit(new), "replace")
        return method(old, new, count)

    return call


def _join(runtime: Runtime, obj: Any, method: Any) -> Any:
    def call(iterable: Any) -> Any:
        items = list(bounded(iterable))
        total = 0
        for item in items:
            if _isinstance(item, _SEQUENCES):
                total += _size(item)
        need((total + _size(obj) * _size(items)) * _unit(obj), "join")
        return method(items)

    return call


def _translate(runtime: Runtime, obj: Any, method: Any) -> Any:
    def call(table: Any) -> Any:
        if _type(table) is dict:
            longest = max(
                (_size(v) for v in table.values() if _isinstance(v, _SEQUENCES)), default=1
            )
            need(_size(obj) * longest * _unit(obj), "translate")
        return method(table)

    return call


def _to_bytes(runtime: Runtime, obj: Any, method: Any) -> Any:
    def call(length: int = 1, *args: Any, **kwargs: Any) -> Any:
        length = as_count(length)
        if _isinstance(length, _int):
            need(length, "int.to_bytes")
        return method(length, *args, **kwargs)

    return call


def _consumer(runtime: Runtime, obj: Any, method: Any) -> Any:
    """``list.extend``, ``set.update``, ``dict.update``, ``dict.fromkeys``: a lazy argument
    draws ticks; a sized one is counted against the allocation budget first."""

    def call(*args: Any, **kwargs: Any) -> Any:
        checked = []
        total = _size(obj) if not _isinstance(obj, _type) else 0
        for arg in args:
            if _type(arg) in _LAZY or not hasattr(arg, "__len__"):
                checked.append(bounded(arg))
            else:
                total += _size(arg)
                checked.append(arg)
        need(total * 8, "a container method")
        return method(*checked, **kwargs)

    return call


def _format_method(runtime: Runtime, obj: Any, method: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        if _isinstance(obj, _type):  # str.format(fmt, ...)
            if args:
                _check_format_string(runtime, args[0], (*args[1:], *kwargs.values()))
                _format_texts(args[0], args[1:], kwargs)
        else:
            _check_format_string(runtime, obj, (*args, *kwargs.values()))
            _format_texts(obj, args, kwargs)
        return method(*args, **kwargs)

    return call


def _field_names(fmt: Any, names: list[Any]) -> list[Any]:
    """The argument each replacement field of ``fmt`` formats, in order (``''`` for an
    automatic number), nested spec fields (``{:{}}``) included."""

    if _isinstance(fmt, _USER_STRING):
        fmt = fmt.data
    if _type(fmt) is not _str and not _isinstance(fmt, _str):
        return names
    for _literal, field, spec, _conversion in _string.formatter_parser(fmt):
        if field is None:
            continue
        first, _rest = _string.formatter_field_name_split(field)
        names.append(first)
        if spec and "{" in spec:
            _field_names(spec, names)
    return names


def _format_texts(fmt: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Count the text of every field of ``fmt``: one big argument used by many fields
    (``'{0}' * 700``) or by a field of a shared list (``'{}'.format([big] * 700)``)."""

    values = []
    auto = 0
    for first in _field_names(fmt, []):
        if first == "":
            first, auto = auto, auto + 1
        if _type(first) is _int:
            if first < _len(args):
                values.append(args[first])
        elif first in kwargs:
            values.append(kwargs[first])
    need_texts(values, "str.format")


def _format_map(runtime: Runtime, obj: Any, method: Any) -> Any:
    def call(*args: Any) -> Any:
        unbound = _isinstance(obj, _type) and _len(args) == 2
        fmt, mapping = (args[0], args[1]) if unbound else (obj, args[0] if args else None)
        if mapping is not None and _type(mapping) is not dict:
            # read once per name, into a plain dict that is then formatted: a mapping of the
            # source's (or a Counter's __missing__) could answer the check and the formatting
            # differently, and a non-dict mapping's values were not checked at all
            names = [n for n in _field_names(fmt, []) if _type(n) is _str and n]
            mapping = {name: mapping[name] for name in names}
            args = (fmt, mapping) if unbound else (mapping,)
        values = tuple(mapping.values()) if _type(mapping) is dict else ()
        _check_format_string(runtime, fmt, values)
        _format_texts(fmt, (), mapping if _type(mapping) is dict else {})
        return method(*args)

    return call


def _strftime(runtime: Runtime, obj: Any, method: Any) -> Any:
    """``date.strftime(fmt)``: C's strftime honours widths (``'%10000Y'``) and makes up to
    256 times the format's length: its widths and a generous expansion are counted first."""

    def call(*args: Any, **kwargs: Any) -> Any:
        fmt = args[-1] if args else kwargs.get("format")
        if _type(fmt) is _str:
            need(_digit_runs(fmt) + 16 * _len(fmt), "strftime")
        return method(*args, **kwargs)

    return call


def _check_format_string(runtime: Runtime, fmt: str, values: tuple[Any, ...]) -> None:
    """Refuse attribute fields the rules would refuse by name (``{0.__class__}``), and widths
    above the allocation budget (a nested ``{:{}}`` width comes from an argument: every int
    and digit run among the arguments is then taken as a possible width)."""

    if _isinstance(fmt, _USER_STRING):
        fmt = fmt.data  # type: ignore[attr-defined]  # UserString.format formats its data
    nested = False
    total = 0
    for _literal, field, spec, _conversion in _string.formatter_parser(fmt):
        if field is None:
            continue
        _first, rest = _string.formatter_field_name_split(field)
        for is_attribute, key in rest:
            if is_attribute:
                name = _normal(key)
                if (
                    name.startswith("_")
                    or name in runtime.rules.denied_attributes
                    or not runtime.rules.possible_attribute(name)
                ):
                    raise runtime.refuse_attribute(
                        fmt,
                        name,
                        "attribute fields in format strings are judged by name: not granted",
                    )
        if spec:
            if "{" in spec:
                nested = True
                _check_format_string(runtime, spec, ())
            else:
                total += _digit_runs(spec)  # all fields: '{:>60000000}' * 20 is 1.2 GB
                if spec[-1:] in ("f", "F", "%"):
                    for value in values:  # which value a field formats is not known here
                        decimal_spec_cost(value, spec)
    if total > 64:
        need(total, "format widths and precisions")
    if nested:
        for value in values:
            kind = _type(value)
            if _isinstance(value, _int) and value > 64:
                need(value, "a format width from an argument")
            elif kind is _str and _digit_runs(value) > 64:
                need(_digit_runs(value), "a format spec from an argument")
            elif kind in (float, complex, decimal.Decimal, fractions.Fraction):
                continue  # their text is no valid width
            elif _source_made(kind):
                # its __repr__ could say '1000000000' when format() asks (and something
                # else when asked here): a nested spec takes no argument of the source's class
                raise runtime.refuse_call(
                    "format",
                    "a format string with a nested spec takes no argument of a class the "
                    "source defined",
                )
            elif kind not in _SCALARS and _digit_runs(format(value, "")) > 64:
                # a library's number (a sympy Integer) formats as digits
                need(_digit_runs(format(value, "")), "a format spec from an argument")


def _then_measured(runtime: Runtime, obj: Any, method: Any) -> Any:
    """Methods whose result can outgrow their input several times with no width to estimate
    (``('a ' * 3 * 10**7).split()``: a list of 30 million strings): a large result is followed
    by the memory-growth check at once, not at the next chunk of ticks."""

    def call(*args: Any, **kwargs: Any) -> Any:
        result = method(*args, **kwargs)
        if _len(result) > 1 << 16:
            current().check()
        return result

    return call


_CHECKED: dict[str, Any] = {
    "split": _then_measured,
    "rsplit": _then_measured,
    "splitlines": _then_measured,
    "encode": _then_measured,
    "decode": _then_measured,
    "center": _width(0),
    "ljust": _width(0),
    "rjust": _width(0),
    "zfill": _width(0),
    "expandtabs": _expandtabs,
    "replace": _replace,
    "join": _join,
    "translate": _translate,
    "to_bytes": _to_bytes,
    "format": _format_method,
    "format_map": _format_map,
    "extend": _consumer,
    "update": _consumer,
    "fromkeys": _consumer,
    # set methods that iterate their arguments in C: {1}.isdisjoint(range(-10**12, 0))
    "union": _consumer,
    "intersection": _consumer,
    "difference": _consumer,
    "symmetric_difference": _consumer,
    "issubset": _consumer,
    "issuperset": _consumer,
    "isdisjoint": _consumer,
    "intersection_update": _consumer,
    "difference_update": _consumer,
    "symmetric_difference_update": _consumer,
}


# -- builtins with checks ------------------------------------------------------------


def _consume(function: Callable[..., Any]) -> Callable[..., Any]:
    """A builtin that consumes its one iterable argument in C: drawn through the ticks (and a
    ``range`` that would be stored is counted against the allocation budget first)."""

    stores = function in (list, tuple, set, frozenset, sorted, dict)

    def call(*args: Any, **kwargs: Any) -> Any:
        if _len(args) == 1:
            first = args[0]
            if stores and _type(first) is range:
                need(_len(first) * 8, f"{function.__name__}(range)")
            return function(bounded(first), **kwargs)
        return function(*args, **kwargs)

    call.__name__ = call.__qualname__ = function.__name__
    return call


def _sized(function: Callable[..., Any], unit: int) -> Callable[..., Any]:
    """``bytes(n)``, ``bytearray(n)``: the size is checked; a lazy iterable draws ticks."""

    def call(*args: Any, **kwargs: Any) -> Any:
        if args:
            first = as_count(args[0])
            if first is not args[0]:
                args = (first, *args[1:])
            if _isinstance(first, _int) and not _isinstance(first, bool):
                need(first * unit, f"{function.__name__}({first})")
            elif _type(first) in _LAZY or (
                not hasattr(first, "__len__") and hasattr(first, "__iter__")
            ):
                return function(bounded(first), *args[1:], **kwargs)
        return function(*args, **kwargs)

    call.__name__ = call.__qualname__ = function.__name__
    return call


#: Bit operations a modular power may cost (exponent bits times modulus bits squared): about
#: half a second here; RSA-4096 arithmetic is well under it (7 * 10**10).
_MODPOW_BUDGET = 1 << 37


def _pow(base: Any, exp: Any, mod: Any = None) -> Any:
    if mod is None:
        _pow_cost(base, exp)
        return pow(base, exp)
    modpow_cost(exp, mod)
    return pow(base, exp, mod)


def _bits_of(value: Any) -> int:
    """The bits of an int, or of a Decimal's integer (its digits and exponent)."""

    if _isinstance(value, _int):
        return _int(value.bit_length())
    if _isinstance(value, decimal.Decimal) and value.is_finite():
        return _int(max(0, value.adjusted() + 1) * 3.33) + 1
    return 0


def modpow_cost(exp: Any, mod: Any) -> None:
    """A modular power is one C call that nothing interrupts in-process: ``pow(3, 10**20000,
    10**20000 + 7)`` is hours of squaring 66,000-bit numbers with operands of 8 KB; the same
    with ``Decimal`` operands at a high precision (``Context.power(a, b, modulo)``)."""

    if not (
        _isinstance(exp, (_int, decimal.Decimal)) and _isinstance(mod, (_int, decimal.Decimal))
    ):
        return
    exp_bits, mod_bits = _bits_of(exp), _bits_of(mod)
    cost = exp_bits * mod_bits**2
    if _isinstance(mod, decimal.Decimal) or _isinstance(exp, decimal.Decimal):
        cost *= 8  # decimal's own arithmetic is several times slower than int's
    if cost > _MODPOW_BUDGET:
        state = current()
        raise state.trip(
            EvalTimeout(
                f"pow() with a {exp_bits}-bit exponent and a {mod_bits}-bit "
                f"modulus would run past {state.rules.key('eval-timeout')} in one call"
            )
        )


def _filter(function: Any, iterable: Any) -> Any:
    """``filter``: its argument drawn through the ticks when lazy: ``next(filter(None,
    repeat(0)))`` would otherwise search for ever in C."""

    given = iterable
    if _type(iterable) in _LAZY or not hasattr(iterable, "__len__"):
        iterable = unpacked(iterable)
    return lazy_made(filter(function, iterable), (given,), 2 if iterable is not given else 1)


#: How deep lazy iterators may nest (``x = map(abs, x)`` in a loop): drawing one item from
#: the outermost recurses through every level in C, and 100,000 levels overflow the C stack
#: (the process ends). No Python frame is involved, so no recursion limit applies.
MAX_LAZY_DEPTH = 1000
#: Lazy iterators remembered per evaluation (the latest ones: a chain is built from the one
#: just made).
_LAZY_WINDOW = 4096


def lazy_made(result: Any, sources: Any, levels: int = 1) -> Any:
    """Record how deep ``result`` (a lazy iterator over ``sources``) nests, refusing past
    :data:`MAX_LAZY_DEPTH`; ``levels``: the iterators it adds (one, or two with the
    guard's own ticking wrapper)."""

    state = current()
    lazy = state.lazy
    depth = 0
    for source in sources:
        found = lazy.get(id(source))
        if found is not None and found[0] is source:
            if found[1] > depth:
                depth = found[1]
        elif depth < 1 and _is_iterator(_type(source)):
            depth = 1
    if depth:
        depth += levels
        if depth > MAX_LAZY_DEPTH:
            raise state.trip(
                EvalRecursionError(
                    f"lazy iterators nested deeper than {MAX_LAZY_DEPTH} (map of a map of ...): "
                    "drawing from them would overflow the C stack"
                )
            )
        if _len(lazy) >= _LAZY_WINDOW:
            del lazy[next(iter(lazy))]
        lazy[id(result)] = (result, depth)
    return result


def _lazy_builtin(kind: Any) -> Callable[..., Any]:
    """``map``, ``zip``, ``enumerate``: their nesting counted (:func:`lazy_made`)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return lazy_made(kind(*args, **kwargs), args)

    call.__name__ = call.__qualname__ = kind.__name__
    return call


def _iter(*args: Any) -> Any:
    """``iter``: ``iter(callable, sentinel)`` calls a function in C until the sentinel comes
    (``iter(int, 1)`` never ends): it draws ticks wherever it is consumed."""

    if _len(args) == 2:
        return Bounded(iter(*args), current().ticks)
    return iter(*args)


def _round(number: Any, ndigits: Any = None) -> Any:
    ndigits = as_count(ndigits)
    if _isinstance(ndigits, _int) and ndigits > 1000:
        need(ndigits // 2, "round")
    if ndigits is None:
        decimal_int_cost(number, "round() of a Decimal")
        return round(number)
    return round(number, ndigits)


#: Digits of a Decimal's integral part above which converting it to an int is refused as
#: a timeout: the conversion is quadratic in one C call (200,000 digits: 2 s here).
DECIMAL_INT_DIGITS = 60_000


def decimal_int_cost(value: Any, what: str) -> None:
    """``int(Decimal('1e999999'))``, ``round`` of one, ``math.floor``...: an int of as many
    digits as the exponent says, computed in one C call."""

    if not _isinstance(value, decimal.Decimal) or not value.is_finite():
        return
    int_digits_cost(value.adjusted() + 1, what)


def int_digits_cost(digits: int, what: str) -> None:
    """Converting a decimal number of ``digits`` digits to an int (or back): refused past
    :data:`DECIMAL_INT_DIGITS`, counted against the allocation budget under it."""

    if digits <= 4300:
        return
    if digits > DECIMAL_INT_DIGITS:
        state = current()
        raise state.trip(
            EvalTimeout(
                f"{what} with {digits} integral digits would run past "
                f"{state.rules.key('eval-timeout')} in one call (at most {DECIMAL_INT_DIGITS})"
            )
        )
    need_int(_int(digits * 3.33) // 8 + 1, what)


def _sum(iterable: Any, /, start: Any = 0) -> Any:
    """``sum``: the iterable drawn through the ticks; a list or tuple ``start`` (``sum(rows,
    [])``) concatenates each item into a new copy, quadratic and unbounded in C: the total
    is counted first and built once."""

    kind = _type(start)
    if kind is _int or kind is float or kind in _NUMBER_KINDS:
        return sum(bounded(iterable), start)
    items = list(bounded(iterable))
    if kind is list or kind is tuple:
        total = _len(start)
        for item in items:
            if _type(item) is not kind:
                break
            total += _len(item)
        else:
            need(total * 8, "sum() of sequences")
            return kind(itertools.chain(start, *items))
    result = start
    for item in bounded(items):
        result = op_add(result, item)
        if _isinstance(result, _SEQUENCES) and _size(result) > 1 << 16:
            current().check()
    return result


_NUMBER_KINDS: frozenset[type] = frozenset({bool, complex, decimal.Decimal, fractions.Fraction})


def _repr(value: Any) -> str:
    need_text(value, "repr()")
    return repr(value)


def _ascii(value: Any) -> str:
    need_text(value, "ascii()")
    return ascii(value)


def _str_call(*args: Any, **kwargs: Any) -> Any:
    """``str(x)``: the text of a container counted first (``str([big] * 700)``)."""

    one = _len(args) == 1 and not kwargs
    if one or (not args and _len(kwargs) == 1 and "object" in kwargs):
        value = args[0] if one else kwargs["object"]
        if _type(value) not in _SHORT_TEXT:
            need_text(value, "str()")
    return _str(*args, **kwargs)


_str_call.__name__ = _str_call.__qualname__ = "str"


def _int_call(*args: Any, **kwargs: Any) -> Any:
    """``int(x)``: a ``Decimal`` with a huge exponent is refused first (see
    :func:`decimal_int_cost`)."""

    if args and _type(args[0]) is decimal.Decimal:
        decimal_int_cost(args[0], "int() of a Decimal")
    return _int(*args, **kwargs)


_int_call.__name__ = _int_call.__qualname__ = "int"


def _format(value: Any, spec: Any = "") -> str:
    check_spec(spec)
    if not spec:
        need_text(value, "format()")
    if _isinstance(value, decimal.Decimal):
        decimal_spec_cost(value, spec)
    return format(value, spec)


#: The modules CPython's own C code imports while evaluated code runs: ``PyImport_Import``
#: looks ``__import__`` up in the running frame's builtins, and from 3.12 big-integer division
#: and conversions past a size import ``_pylong`` that way (without an ``__import__`` there,
#: ``(7**40000 - 1) // 3**40000`` failed with ``KeyError: '__import__'``). Nothing else.
INTERPRETER_IMPORTS = frozenset({"_pylong"})


def _interpreter_import(
    name: object,
    globals: object = None,
    locals: object = None,
    fromlist: object = (),
    level: object = 0,
) -> None:
    """The ``__import__`` of an evaluation's builtins, for the interpreter's own imports only.

    The source cannot name it (a dunder name is refused by the check) and the source's own
    ``import`` statements go through ``_sb_import``. It returns nothing: ``PyImport_Import``
    takes the module from ``sys.modules`` after the call, so no module reaches the caller."""

    if type(name) is str and name in INTERPRETER_IMPORTS and level == 0:
        __import__(name)
        return None
    raise ImportError(
        f"evaluated code imports with its import statement only: {name!r} refused",
        name=name if type(name) is str else None,
    )


_SAFE_BUILTINS: dict[str, Any] = {
    name: _getattr(builtins, name) for name in rules_module.GRANTABLE_BUILTINS
}
_SAFE_BUILTINS.update(
    sum=_sum,
    repr=_repr,
    ascii=_ascii,
    min=_consume(min),
    max=_consume(max),
    sorted=_consume(sorted),
    any=_consume(any),
    all=_consume(all),
    pow=_pow,
    round=_round,
    format=_format,
    filter=_filter,
    iter=_iter,
)
#: Builtin types whose constructors are checked: the source sees a function that calls the
#: type; ``type(x)``, ``isinstance`` and ``except`` translate between the two.
_WRAPPED_NAMES: tuple[str, ...] = (
    "map",
    "zip",
    "enumerate",
    "str",
    "int",
    "list",
    "tuple",
    "set",
    "frozenset",
    "dict",
    "bytes",
    "bytearray",
)


_LAZY_BUILTINS: frozenset[type] = frozenset({map, zip, enumerate})


def _type_wrappers(runtime: Runtime) -> tuple[dict[Any, Any], dict[int, Any]]:
    wrapped: dict[Any, Any] = {}
    real: dict[int, Any] = {}
    for name in _WRAPPED_NAMES:
        kind = _getattr(builtins, name)
        unit = 1 if name in ("bytes", "bytearray") else 8
        if kind in _LAZY_BUILTINS:
            wrapper: Any = _lazy_builtin(kind)
        elif kind is _str:
            wrapper = _str_call
        elif kind is _int:
            wrapper = _int_call
        else:
            wrapper = _sized(kind, unit) if unit == 1 else _consume(kind)
        wrapped[kind] = wrapper
        real[id(wrapper)] = kind
    return wrapped, real


# -- data crossing --------------------------------------------------------------------------------

_SCALARS: frozenset[type] = frozenset(
    {
        _type(None),
        bool,
        _int,
        float,
        complex,
        _str,
        _bytes,
        decimal.Decimal,
        fractions.Fraction,
        range,
    }
)


def _date_types() -> frozenset[type]:
    import datetime

    return frozenset(
        {datetime.date, datetime.datetime, datetime.time, datetime.timedelta, datetime.timezone}
    )


_DATES = _date_types()
#: What has a ``strftime`` (``datetime`` is a ``date``).
_DATE_TYPES: tuple[type, ...] = tuple(t for t in _DATES if t.__name__ in ("date", "time"))


def copy_in(value: Any, runtime: Runtime, strict: bool, where: str, depth: int = 0) -> Any:
    """A copy of host data for evaluated code; a host function wrapped; a granted module as its
    view. Anything else: ``TypeError`` (``strict``) or the marker ``_SKIP``."""

    kind = _type(value)
    if kind in _SCALARS or kind in _DATES:
        return value
    if depth > 100:
        raise TypeError(f"{where}: data nested too deeply to copy")
    if kind is list or kind is tuple or kind is set or kind is frozenset:
        items = [copy_in(v, runtime, True, where, depth + 1) for v in value]
        return kind(items)
    if kind is dict:
        return {
            copy_in(k, runtime, True, where, depth + 1): copy_in(v, runtime, True, where, depth + 1)
            for k, v in value.items()
        }
    if kind is _type(sys):
        if value.__name__ in runtime.rules.imports:
            return runtime.view(value.__name__)
    elif kind is ModuleView:
        return value
    elif _isinstance(value, _type) and runtime._module_of(value):
        return runtime.library_class(value)  # a class of a granted module (sympy.sin)
    elif kind in _FUNCTION_TYPES and runtime._module_of(value):
        return _LibraryCall(value, runtime)  # a function of a granted module
    elif runtime._module_of(kind):
        # An object of a granted module (a sympy Symbol): it crosses as is, as the module's
        # own objects do (public attributes readable, by the module's grant).
        return value
    elif kind in (_type(len), _type(copy_in), _type([].append), _type(str.join)) or (
        callable(value) and kind is not _type
    ):
        if kind is HostFunction:
            return value
        return HostFunction(value, runtime)
    if strict:
        raise TypeError(
            f"{where}: a {kind.__name__} cannot cross into a guarded evaluation "
            "(pass data: numbers, strings, bytes, lists, tuples, dicts, sets, dates; or a function)"
        )
    return _SKIP


_SKIP = object()


def copy_out(value: Any, depth: int = 0, seen: set[int] | None = None) -> Any:
    """A result checked before it reaches the host: data crosses as is; a function, class or
    generator of the evaluated source does not (it would run guarded code after the end).
    Each container is looked at once (``seen``): a result of shared references
    (``a = [a, a]`` fifty times) is walked in the size of its objects, not of its tree."""

    kind = _type(value)
    if kind in _SCALARS or kind in _DATES:
        return value
    if depth > 100:
        raise TypeError("the result of a guarded evaluation is nested too deeply")
    if kind in (list, tuple, set, frozenset) or kind is dict:
        if seen is None:
            seen = set()
        elif id(value) in seen:
            return value
        seen.add(id(value))
        if kind is dict:
            for key, item in value.items():
                copy_out(key, depth + 1, seen)
                copy_out(item, depth + 1, seen)
        else:
            for item in value:
                copy_out(item, depth + 1, seen)
        return value
    if (
        kind is _type(copy_out)
        or kind in _GENERATOR_TYPES
        or (kind is _type and _source_made(value))
        or _source_made(kind)
    ):
        raise RuleEvalError(
            f"a {kind.__name__} made by evaluated code cannot be returned to the host"
        )
    if kind in (ModuleView, _Setter, _LibraryCall, HostFunction, _Package, Bounded, _RangeIn):
        raise RuleEvalError(f"a {kind.__name__} of the guard cannot be returned to the host")
    return value


def check_result_size(value: Any, rules: EvalRules) -> None:
    """Refuse a result whose text -- what the host makes of it when it prints, compares or
    copies it, every shared reference counted -- exceeds ``eval-max-alloc``:
    ``['x' * 10**6] * 700`` is 1 MB in memory and 700 MB once printed."""

    kind = _type(value)
    if kind in _SHORT_TEXT or kind is _bytes:
        return
    size = text_size(value)
    if size > rules.max_alloc:
        raise EvalMemoryError(
            f"the result of a guarded evaluation is about {size} characters once printed "
            f"(shared references counted), more than {rules.key('eval-max-alloc')} "
            f"({rules.max_alloc})"
        )


# -- exceptions leaving an evaluation ---------------------------------------------------

#: Characters of an exception's arguments' text that cross to the host as they are: past it
#: an argument is replaced by a short description (``KeyError(('x' * 10**6,) * 700)``,
#: raised by C code with the key as its argument, prints 700 MB wherever the host shows it).
EXCEPTION_TEXT = 1 << 16
#: Links of an exception's chain (causes and contexts) screened.
_CHAIN = 16
_PLAIN_ARGS: frozenset[type] = frozenset({_type(None), bool, float, complex})


def screen_exception(exc: BaseException) -> BaseException:
    """``exc`` (and its chain) with arguments the host can print: an argument whose text
    would exceed :data:`EXCEPTION_TEXT` (shared references counted as printed) or an int
    ``str()`` refuses (``KeyError(10**5000)``: ``str(e)`` raised ``ValueError`` in the host's
    handler) is replaced by a short description of it. Done in the evaluation's process
    while its budgets still hold (the worker's, for the worker backend), before the
    exception reaches the host or the worker's error record."""

    seen: set[int] = set()
    todo = [exc]
    while todo and _len(seen) < _CHAIN:
        link = todo.pop()
        if id(link) in seen:
            continue
        seen.add(id(link))
        _screen_args(link)
        for nxt in (link.__cause__, link.__context__):
            if nxt is not None:
                todo.append(nxt)
    return exc


def _screen_args(exc: BaseException) -> None:
    try:
        args = exc.args
    except Exception:  # pragma: no cover - a broken args descriptor
        return
    if _type(args) is not tuple:
        return
    changed = False
    shown: list[Any] = []
    seen: dict[int, int] = {}
    for arg in args:
        kind = _type(arg)
        if kind in _PLAIN_ARGS or (kind is _str and _len(arg) <= EXCEPTION_TEXT):
            shown.append(arg)
            continue
        if kind is _int and arg.bit_length() * _DIGITS_PER_BIT > 4000:
            shown.append(f"<an int of {arg.bit_length()} bits, not shown>")
            changed = True
            continue
        try:
            size = text_size(arg, 0, seen)
        except Exception:  # pragma: no cover - an object whose walk fails: not shown
            size = EXCEPTION_TEXT + 1
        if size > EXCEPTION_TEXT or _has_huge_int(arg):
            shown.append(f"<a {kind.__name__} of about {size} characters once printed, not shown>")
            changed = True
        else:
            shown.append(arg)
    if changed:
        with contextlib.suppress(Exception):  # an exception type that refuses new args
            exc.args = tuple(shown)


def _has_huge_int(value: Any, depth: int = 0) -> bool:
    """Whether a container holds an int too long for ``str()`` (its text would raise)."""

    kind = _type(value)
    if kind is _int:
        return bool(value.bit_length() * _DIGITS_PER_BIT > 4000)
    if depth > 50:
        return False
    if kind in (list, tuple, set, frozenset):
        return any(_has_huge_int(item, depth + 1) for item in value)
    if kind is dict:
        return any(
            _has_huge_int(k, depth + 1) or _has_huge_int(v, depth + 1) for k, v in value.items()
        )
    return False


# -- strings compiled by libraries while a source runs ------------------------------

Stop = _Stop
SKIP = _SKIP
_hook_installed: list[bool] = []


def set_compiling(flag: bool) -> None:
    """Mark the guard's own parse and compile of a checked source (allowed by the hook)."""

    _local.compiling = flag


def install_string_hook() -> None:
    """Refuse, while a guarded evaluation runs on a thread, any compile of source text that
    neither the guard nor the import system does: a library function the source may call
    (``sympy.sympify('...')``, ``collections.namedtuple``) would otherwise run a string the
    check never saw. Added once per process (an audit hook cannot be removed)."""

    if _hook_installed:
        return
    _hook_installed.append(True)
    sys.addaudithook(_string_hook)


#: Library functions that compile text they build themselves from no string the evaluated
#: source gave (function name, end of its file's path), allowed to while a source runs:
#: sympy's polynomial rings generate their monomial operations from the number of
#: generators (``integrate``, ``simplify``, ``cancel``, ``apart`` use them). Not sympify,
#: parse_expr, lambdify or namedtuple: their text comes from the source's strings or
#: symbol names (``nsimplify`` sympifies a formula naming the constants it is given).
CODE_GENERATORS: frozenset[tuple[str, str]] = frozenset({("_build", "/sympy/polys/monomials.py")})


#: The replacements of the ``eval``/``exec`` builtins (a library's call passes through them).
_PROGRAM_FILE = __file__[: -len("runtime.py")] + "program.py"


def _string_hook(event: str, args: tuple[Any, ...]) -> None:
    if event != "compile":
        return
    state = _getattr(_local, "state", None)
    if state is None or _getattr(_local, "compiling", False) or state.finished:
        return
    source = args[0] if args else None
    if _type(source) is not _str and _type(source) is not _bytes:
        return
    frame: Any = sys._getframe(1)
    code = frame.f_code
    if code.co_filename == _PROGRAM_FILE and frame.f_back is not None:
        code = frame.f_back.f_code  # through the guarded exec builtin (python-sb's program)
    for name, path in CODE_GENERATORS:
        if code.co_name == name and code.co_filename.endswith(path):
            return  # a library's own code generation from no text of the source's
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith("<frozen importlib"):
            return  # the import system compiling a module's file
        if filename == "<guarded-eval>":
            break
        frame = frame.f_back
    raise state.trip(
        RuleEvalError(
            "a library called by evaluated code compiled source text (string evaluators such "
            "as sympify or namedtuple are refused while a guarded evaluation runs)"
        )
    )


def _decimal_context_of(function: Any, qualname: str, kwargs: dict[str, Any]) -> Any:
    """The decimal context a call computes in: its ``context=`` argument, the ``Context`` it
    is a method of, or the thread's current one (the estimates of ``_DECIMAL_SLOW`` and
    ``_DECIMAL_SQRT`` read its precision)."""

    context = kwargs.get("context")
    if context is None:
        context = (
            _getattr(function, "__self__", None)
            if qualname.startswith("Context.")
            else decimal.getcontext()
        )
    return context
