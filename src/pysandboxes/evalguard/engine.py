"""Checked code, cached; and the in-process run of one evaluation.

The hot path of a repeated source is a dictionary look-up (the code compiled from the checked
and rewritten tree, keyed by source, mode and the rules object of the profile), a fresh
namespace and one :class:`~pysandboxes.evalguard.runtime.State`: no parse, thread, timer or
process per call. A refused source is cached too (its error is raised again, rebuilt).
"""

from __future__ import annotations

import decimal
import opcode as _opcode  # the instruction table (not dis, which imports more)
from time import monotonic as _monotonic

from pysandboxes.errors import EvalSyntaxRejected, EvalTimeout, RuleEvalError
from pysandboxes.evalguard import check, rewrite, runtime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from pysandboxes.evalguard.rules import EvalRules

FILENAME = "<guarded-eval>"
_CACHE_SIZE = 1024
#: Both keyed by the rules object itself (``EvalRules`` hashes by identity), never by ``id()``:
#: under python-sb each ``id()`` call raises an audit event the guard dispatches, and these
#: look-ups run on every evaluation. The key holds the object, so no later object can come
#: to share it (an ``id`` is reused once its object is freed).
_cache: dict[tuple[str, str, EvalRules], Any] = {}
_runtimes: dict[EvalRules, runtime.Runtime] = {}
_real_compile = compile
_real_eval = eval


def _no_inline_cache(name: str) -> bool:
    """Whether instruction ``name`` exists and has no inline cache entry in this CPython (its
    two bytes are then the whole instruction); ``False`` when it cannot be told."""

    number = _opcode.opmap.get(name)
    caches: Any = getattr(_opcode, "_inline_cache_entries", None)
    if number is None or caches is None:
        return False
    try:
        if isinstance(caches, dict):  # 3.13: by name, absent when none
            return not caches.get(name) and not caches.get(number)
        return bool(caches[number] == 0)
    except (IndexError, KeyError, TypeError, ValueError):
        return False


_LOAD_NAME = _opcode.opmap.get("LOAD_NAME", -1)
_LOAD_CONST = _opcode.opmap.get("LOAD_CONST", -1)
_EXTENDED_ARG = _opcode.opmap.get("EXTENDED_ARG", -1)
#: Whether a ``LOAD_NAME`` can be turned into a ``LOAD_CONST`` in place (same size).
_BINDABLE = _no_inline_cache("LOAD_NAME") and _no_inline_cache("LOAD_CONST")


class Compiled:
    """A checked, rewritten, compiled source.

    ``helpers``: the guard's helpers its top-level code names (``_sb_type``, ``_sb_mul``...),
    put in the namespace itself for the run. Top-level code reads every name with
    ``LOAD_NAME`` (the namespace, then the builtins): a helper found in the first dictionary
    costs one look-up instead of three, which is most of a loop's checked arithmetic.
    Evaluated code cannot name ``_sb_*`` (the check refuses it), host ``names`` cannot either,
    and they are removed when the run ends."""

    __slots__ = ("answered", "code", "helpers", "mode", "rules", "source")

    def __init__(self, code: Any, mode: str, rules: EvalRules, source: str) -> None:
        self.code = code
        self.mode = mode
        self.rules = rules
        self.source = source
        #: Seconds the worker took to answer it last time (``evalguard/worker.py``).
        self.answered = 0.0
        table = runtime_for(rules).builtins
        self.helpers = {
            name: table[name] for name in code.co_names if name.startswith("_sb_") and name in table
        }
        self.code = _bind_helpers(code, self.helpers)


def _bind_helpers(code: Any, helpers: dict[str, Any]) -> Any:
    """``code`` with its top-level reads of the guard's helpers made constants.

    Top-level code reads every name with ``LOAD_NAME``: a dictionary look-up, two per checked
    operation (``_sb_type(i) is _sb_int``), most of a loop's checked arithmetic. Each such
    ``LOAD_NAME`` of a helper becomes a ``LOAD_CONST`` of the very object it would have found
    (the helpers are the namespace's for the run, and no source can bind an ``_sb_`` name:
    the check refuses it), in place: same size, so no jump or table moves. One with an
    ``EXTENDED_ARG``, or that would need one, is left as it was, as is every other read
    (functions of the source read the helpers from the namespace, which still has them)."""

    if not _BINDABLE or not helpers:
        return code
    raw = bytearray(code.co_code)
    consts = list(code.co_consts)
    names = code.co_names
    slots: dict[str, int] = {}
    for at in range(0, len(raw), 2):
        if raw[at] != _LOAD_NAME or (at and raw[at - 2] == _EXTENDED_ARG):
            continue
        name = names[raw[at + 1]]
        if name not in helpers:
            continue
        slot = slots.get(name)
        if slot is None:
            if len(consts) > 255:
                continue
            slot = slots[name] = len(consts)
            consts.append(helpers[name])
        raw[at] = _LOAD_CONST
        raw[at + 1] = slot
    if not slots:
        return code
    return code.replace(co_code=bytes(raw), co_consts=tuple(consts))


def runtime_for(rules: EvalRules) -> runtime.Runtime:
    found = _runtimes.get(rules)
    if found is None:
        found = _runtimes[rules] = runtime.Runtime(rules)
    return found


def prepare(source: str, mode: str, rules: EvalRules) -> Compiled:
    """Check, rewrite and compile ``source`` (cached); ``EvalSyntaxRejected`` when refused."""

    if type(source) is not str:
        if isinstance(source, (bytes, bytearray)):
            source = bytes(source).decode("utf-8")
        else:
            raise TypeError(f"guarded evaluation needs source text, not {type(source).__name__}")
    if mode not in ("eval", "exec"):
        raise ValueError(f"mode must be 'eval' or 'exec', not {mode!r}")
    key = (source, mode, rules)
    found = _cache.get(key)
    if found is not None:
        if isinstance(found, Compiled):
            return found
        if isinstance(found, EvalSyntaxRejected):
            raise EvalSyntaxRejected(found.msg, violations=found.violations)
    runtime.set_compiling(True)
    try:
        tree = check.parse(source.strip() if mode == "eval" else source, mode, rules)
        code = _real_compile(rewrite.rewrite(tree), FILENAME, mode, 0, True)  # type: ignore[call-overload]
    except EvalSyntaxRejected as exc:
        _store(key, exc)
        raise
    finally:
        runtime.set_compiling(False)
    compiled = Compiled(code, mode, rules, source)
    _store(key, compiled)
    return compiled


def _store(key: tuple[str, str, EvalRules], value: Any) -> None:
    if len(_cache) >= _CACHE_SIZE:
        _cache.pop(next(iter(_cache)))
    _cache[key] = value


def namespace(compiled: Compiled, names: Mapping[str, Any] | None, strict: bool) -> dict[str, Any]:
    """A fresh namespace: the granted builtins (``__builtins__``), copies of ``names``."""

    rt = runtime_for(compiled.rules)
    ns: dict[str, Any] = {}
    if names:
        for name, value in names.items():
            if type(name) is not str or not name.isidentifier():
                raise TypeError(f"names: {name!r} is not an identifier")
            if name.startswith("_sb_") or name.startswith("__"):
                if strict:
                    raise ValueError(
                        f"names: {name!r} is reserved (a name starting with _sb_ or __ could "
                        "shadow the guard)"
                    )
                continue
            copied = runtime.copy_in(value, rt, strict, f"names[{name!r}]")
            if copied is not runtime.SKIP:
                ns[name] = copied
    ns["__builtins__"] = rt.builtins
    ns["__name__"] = "<guarded-eval>"  # what a class body records as its __module__
    return ns


def run(compiled: Compiled, ns: dict[str, Any]) -> Any:
    """Run ``compiled`` in ``ns`` in this process, under a fresh budget state."""

    rules = compiled.rules
    state = runtime.State(rules)
    helpers = compiled.helpers
    if helpers:
        ns.update(helpers)
    ns["_sb_t"] = state.ticks
    ns["_sb_live"] = state.live
    previous = runtime.set_current(state)
    try:
        if "decimal" in rules.imports:
            saved = [template.copy() for template in _DECIMAL_TEMPLATES]
            try:
                with decimal.localcontext():
                    result = _real_eval(compiled.code, ns)
            finally:
                _restore_templates(saved)
        else:
            result = _real_eval(compiled.code, ns)
    except runtime.Stop:
        error = state.error or RuleEvalError("guarded evaluation interrupted")
        raise error.with_traceback(None) from None
    except SystemExit as exc:
        if getattr(exc, "_sb_host", False):
            raise  # a host function's own SystemExit (runtime.HostFunction): the host's
        # a library's sys.exit (a parser's error, say): the host's process is not the
        # evaluation's to end
        raise (
            state.error
            or RuleEvalError(
                f"evaluated code tried to end the process (SystemExit({exc.code!r}) from a library)"
            )
        ).with_traceback(None) from None
    except BaseException as exc:
        if state.error is not None:  # a library turned the interruption into its own error
            raise state.error.with_traceback(None) from None
        runtime.screen_exception(exc)  # arguments the host can print (issue 25)
        raise
    finally:
        state.finished = True
        runtime.set_current(previous)
        ns.pop("_sb_t", None)
        ns.pop("_sb_live", None)
        for name in helpers:
            ns.pop(name, None)
    if state.error is not None:  # swallowed on the way (a library's bare except)
        raise state.error.with_traceback(None)
    if _monotonic() > state.deadline:
        # One long call with no check after it (a big-int division, a C function): it ran
        # to its end in-process, and it is a timeout all the same, never a late success.
        raise EvalTimeout(
            f"guarded evaluation ran past {rules.key('eval-timeout')} ({rules.timeout:g}s)"
        )
    if compiled.mode == "eval":
        runtime.copy_out(result)
        runtime.check_result_size(result, rules)
        return result
    return None


#: The contexts the decimal module shares with every thread of the process: a new thread's
#: context is a copy of ``DefaultContext``, and ``setcontext(DefaultContext)`` installs the
#: shared object itself. What an evaluation changes in them (``DefaultContext.prec = 5``,
#: its traps) would outlive it, in the host (in-process) or in the worker's next evaluations.
_DECIMAL_TEMPLATES = (decimal.DefaultContext, decimal.BasicContext, decimal.ExtendedContext)
_CONTEXT_FIELDS = ("prec", "rounding", "Emin", "Emax", "capitals", "clamp")


def _restore_templates(saved: list[decimal.Context]) -> None:
    """Put the shared decimal contexts back as they were before the evaluation."""

    for template, was in zip(_DECIMAL_TEMPLATES, saved, strict=True):
        for field in _CONTEXT_FIELDS:
            value = getattr(was, field)
            if getattr(template, field) != value:
                setattr(template, field, value)
        template.traps = dict(was.traps)  # type: ignore[assignment]
        template.flags = dict(was.flags)  # type: ignore[assignment]


def bound_names(ns: dict[str, Any], rules: EvalRules | None = None) -> dict[str, Any]:
    """What an ``exec`` bound that may cross back: data only (functions, classes and the
    guard's objects stay behind). With ``rules``: their text, shared references counted, is
    held to ``eval-max-alloc`` as an ``eval`` result's is."""

    out: dict[str, Any] = {}
    seen: set[int] = set()
    for name, value in ns.items():
        if name.startswith(("_sb_", "__")) or callable(value):
            continue
        try:
            out[name] = runtime.copy_out(value, 0, seen)
        except (RuleEvalError, TypeError):
            continue
    if rules is not None:
        runtime.check_result_size(out, rules)
    return out
