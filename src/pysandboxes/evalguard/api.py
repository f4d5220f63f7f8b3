"""``guarded_eval``: the way in for tools, and the seam between the check and where it runs.

The source is checked (and ``names`` validated) in the caller, then a backend runs it: by
default the warm worker (``evalguard/worker.py``: hard bounds, a timeout kills the worker),
or :class:`InProcessBackend` (the calling process and thread, budgets checked by the rewrite,
no hard kill: ``docs/eval.md``, "Limits"), or ``fork`` (a child per call).

The rules come from the rule file python-sb armed (then ``rules=`` is refused: the program
cannot widen them), or, in a program not run by python-sb, from ``rules=`` (rule lines, with
origin ``<arg>``: the ``eval-*`` lines judge the source, the others configure the worker).
"""

from __future__ import annotations

import sys

from pysandboxes.errors import ConfigError
from pysandboxes.evalguard import engine
from pysandboxes.evalguard import rules as rules_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any, Protocol

    from pysandboxes.evalguard.rules import EvalRules
    from pysandboxes.policy.model import Policy

    class Backend(Protocol):
        """Where a guarded evaluation runs."""

        name: str

        def run(
            self, source: str, mode: str, names: Mapping[str, Any] | None, rules: EvalRules
        ) -> Any: ...


#: The policy armed by python-sb (at most one), and the rules built per profile.
_armed: list[Policy] = []
#: ``(fork, setrlimit)`` given by the guard when it armed the rules (``guard/evalbuiltins``):
#: the eval worker's only process operations under python-sb.
_operations: list[Any] = []
_built: dict[tuple[int, str | None], tuple[Policy, EvalRules]] = {}
#: The last ``(policy, profile, rules)`` of :func:`rules_for`, compared by identity: the
#: look-up of every evaluation in the eval worker (one armed policy) calls no ``id()``.
_last_built: list[tuple[Policy, str | None, EvalRules]] = []
_from_lines: dict[tuple[str, ...], Policy] = {}
#: Set in a learning or audit run of python-sb (``guard/evalbuiltins.install_learning``).
LEARNING: list[bool] = []
#: The non-eval lines of a ``rules=`` policy, by ``id`` of the policy (kept in ``_from_lines``).
_worker_lines: dict[int, tuple[str, ...]] = {}


def arm(policy: Policy, operations: Any = None) -> None:
    """Called by the guard when python-sb starts a program with ``eval-*`` rules: every
    profile is built now (a rule no profile may grant stops the run before it starts).
    ``operations``: the guard's ``(fork, setrlimit)`` for the eval worker."""

    if _armed:
        raise ConfigError("the eval-* rules are already armed")
    for profile in rules_module.profiles(policy):
        rules_for(policy, profile)
    _armed.append(policy)
    if operations is not None:
        _operations[:] = [operations]
    from pysandboxes.evalguard import runtime

    runtime.install_string_hook()


def armed_policy() -> Policy | None:
    return _armed[0] if _armed else None


def worker_operations() -> Any:
    """The guard's ``(fork, setrlimit)`` under python-sb, else ``None`` (no guard to ask)."""

    return _operations[0] if _operations else None


def worker_lines(rules: EvalRules) -> tuple[str, ...]:
    """The lines of ``rules=`` that are not ``eval-*`` (``os-sandbox=``, ``python-api=``...):
    the rule file of the worker process that runs the evaluations, besides its eval lines."""

    for policy, built in _built.values():
        if built is rules:
            return _worker_lines.get(id(policy), ())
    return ()


def rules_for(policy: Policy, profile: str | None) -> EvalRules:
    """The rules of ``profile`` under ``policy``, built once per policy object.

    The last answer is checked first, by identity: under python-sb every ``id()`` call raises
    an audit event the guard dispatches (this runs once per evaluation in the eval worker),
    and a ``Policy`` hashes by value (15 us), so it is no key of the hot path either. Behind
    it, a table by ``id`` whose entries hold their policy (an entry whose policy is not this
    one is another object's, whose ``id`` this one reuses: rebuilt)."""

    if _last_built:
        last = _last_built[0]
        if last[0] is policy and last[1] == profile:
            return last[2]
    key = (id(policy), profile)
    found = _built.get(key)
    if found is None or found[0] is not policy:
        found = _built[key] = (policy, rules_module.build(policy, profile))
    _last_built[:] = [(policy, profile, found[1])]
    return found[1]


def _policy_from(rules: str | Iterable[str] | Policy) -> Policy:
    from pysandboxes.policy.model import Policy

    if isinstance(rules, Policy):
        return rules
    lines = tuple(rules.splitlines() if isinstance(rules, str) else rules)
    found = _from_lines.get(lines)
    if found is None:
        pairs = []
        others: list[str] = []
        for line in lines:
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            key, eq, value = text.partition("=")
            if not eq:
                raise ConfigError(f"rules: {text!r} is not a key=value line")
            if not key.startswith("eval-"):
                others.append(f"{key.strip()}={value.strip()}")
            pairs.append((key, value))
        from pysandboxes.policy import load_policy

        found = _from_lines[lines] = load_policy(None, cli_rules=pairs, environ={})
        _worker_lines[id(found)] = tuple(others)
    return found


def resolve(profile: str | None, rules: str | Iterable[str] | Policy | None) -> EvalRules:
    """The rules of ``profile``: from the armed rule file, or from ``rules=``."""

    policy = armed_policy()
    if policy is not None:
        if rules is not None:
            raise ConfigError(
                "under python-sb the eval-* rules come from the rule file: rules= is refused "
                "(write eval-* lines, or named profiles eval-call:NAME=..., in the file)"
            )
    elif rules is None:
        raise ConfigError(
            "no eval-* rules: pass rules=['eval-syntax=arith', ...] or run the program with "
            "python-sb and eval-* lines in its rule file"
        )
    else:
        policy = _policy_from(rules)
    return rules_for(policy, profile)


class InProcessBackend:
    """Runs the checked source in the calling process and thread (see the module docstring)."""

    name = "in-process"

    def run(self, source: str, mode: str, names: Mapping[str, Any] | None, rules: EvalRules) -> Any:
        from pysandboxes.evalguard import runtime

        runtime.install_string_hook()
        compiled = engine.prepare(source, mode, rules)
        ns = engine.namespace(compiled, names, strict=True)
        result = engine.run(compiled, ns)
        return result if mode == "eval" else engine.bound_names(ns, rules)


IN_PROCESS = InProcessBackend()
#: Backends chosen by name; ``fork`` and ``worker`` are created at their first use.
_backends: dict[str, Any] = {"in-process": IN_PROCESS}
#: A backend registered under the name ``worker`` becomes the default.
_default: list[Any] = []
#: The built-in worker backend, once imported.
_worker: list[Any] = []


def _builtin_backend(name: str) -> Any:
    if name == "fork":
        if sys.platform == "win32":  # fork is POSIX's (evalguard/fork.py)
            return None
        from pysandboxes.evalguard.fork import FORK

        return FORK
    if name == "worker":
        from pysandboxes.evalguard.worker import WORKER

        return WORKER
    return None


def register_backend(backend: Any) -> None:
    """Make ``backend`` (an object with ``name`` and ``run``) choosable by name; under the
    name ``worker`` it also becomes the default."""

    _backends[backend.name] = backend
    if backend.name == "worker":
        _default[:] = [backend]


def default_backend() -> Any:
    """The worker (hard bounds), or a backend registered under that name. In a learning or
    audit run of python-sb (evaluations are recorded, not bounded) the evaluation runs
    in-process."""

    if _default:
        return _default[0]
    if LEARNING:
        return IN_PROCESS
    if not _worker:
        _worker.append(_builtin_backend("worker"))
    return _worker[0]


def guarded_eval(
    source: str,
    names: Mapping[str, Any] | None = None,
    profile: str | None = None,
    mode: str = "eval",
    *,
    rules: str | Iterable[str] | Policy | None = None,
    backend: str | None = None,
) -> Any:
    """Check ``source`` against the ``eval-*`` rules of ``profile`` and run it under their
    budgets.

    ``names`` are the values the source may read, copied in (data) or wrapped (functions); a
    name starting with ``_sb_`` or ``__`` is refused. ``mode="eval"`` returns the value of
    the expression; ``mode="exec"`` returns the names the statements bound whose values are
    data. Raises :class:`~pysandboxes.errors.EvalSyntaxRejected` (every violation, each with
    the rule line that would allow it), :class:`~pysandboxes.errors.EvalTimeout`,
    :class:`~pysandboxes.errors.EvalMemoryError`, :class:`~pysandboxes.errors.EvalRecursionError`,
    :class:`~pysandboxes.errors.EvalOutputError`, :class:`~pysandboxes.errors.EvalAttributeDenied`,
    :class:`~pysandboxes.errors.EvalWorkerError` (no worker process can be started, or it
    died), or whatever the source itself raised. ``backend``: ``None`` (the warm worker:
    killed at the timeout, memory and CPU by rlimits, host functions called back in this
    process; in-process in a learning run), ``"in-process"``, ``"fork"`` (a child process per
    call) or a registered name.
    """

    if backend is None:
        chosen = default_backend()
    else:
        chosen = _backends.get(backend) or _builtin_backend(backend)
    if chosen is None:
        known = sorted({*_backends, "fork", "worker"})
        raise ValueError(f"unknown backend {backend!r} (known: {', '.join(known)})")
    return chosen.run(source, mode, names, resolve(profile, rules))
