"""The ``fork`` backend: hard bounds for one evaluation, until the warm partial-mode worker
(issue 13) can be plugged in as the ``worker`` backend.

The source is checked in the caller (a refusal costs no process); the run happens in a child
forked for this call, with ``RLIMIT_AS`` (the child's size, probed, plus twice
``eval-max-alloc``) and ``RLIMIT_CPU``; the caller waits at most ``eval-timeout`` (plus a
grace of 100 ms), then kills the child with ``SIGKILL``: a long C call (``re`` backtracking, a
sympy computation) ends there, and the caller gets :class:`~pysandboxes.errors.EvalTimeout`.
The result crosses back as data only (an explicit encoding over a pipe, decoded without
running code); an exception crosses back as its type name, message and denials, rebuilt only
for python-sb's own error classes and a few builtin ones.

One process per call (a few milliseconds): choose it with ``backend="fork"`` where the bound
matters more than the latency. Linux only; under python-sb the guard performs the fork, the
kill and the limits (as for the worker: ``evalguard/worker.py``), with no ``python-api`` rule.
"""

from __future__ import annotations

import builtins
import datetime
import decimal
import fractions
import marshal
import os
import resource
import select
import signal
import sys
import time

from pysandboxes import errors
from pysandboxes.evalguard import engine

if sys.platform == "win32":  # fork, rlimits, wait statuses: POSIX's (issue 19)
    raise ImportError("the fork backend of guarded evaluation needs fork (POSIX)")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from pysandboxes.evalguard.rules import EvalRules

_GRACE = 0.1
_REBUILT_BUILTINS = frozenset(
    {
        "ArithmeticError",
        "AssertionError",
        "AttributeError",
        "IndexError",
        "KeyError",
        "LookupError",
        "NameError",
        "NotImplementedError",
        "OverflowError",
        "RecursionError",
        "RuntimeError",
        "StopIteration",
        "TypeError",
        "ValueError",
        "ZeroDivisionError",
        "MemoryError",
        "UnicodeError",
    }
)


def _encode(value: Any, depth: int = 0) -> Any:
    """Data as tagged marshal-able lists (``marshal.loads`` runs no code)."""

    if depth > 100:
        raise TypeError("the result of a guarded evaluation is nested too deeply")
    kind = type(value)
    if value is None or kind in (bool, int, float, complex, str, bytes):
        return ["v", value]
    if kind in (list, tuple, set, frozenset):
        return [kind.__name__, [_encode(v, depth + 1) for v in value]]
    if kind is dict:
        return ["dict", [[_encode(k, depth + 1), _encode(v, depth + 1)] for k, v in value.items()]]
    if kind is decimal.Decimal:
        return ["decimal", str(value)]
    if kind is fractions.Fraction:
        return ["fraction", [value.numerator, value.denominator]]
    if kind in (datetime.date, datetime.datetime, datetime.time, datetime.timedelta):
        if kind is datetime.timedelta:
            return ["timedelta", [value.days, value.seconds, value.microseconds]]
        return [kind.__name__, value.isoformat()]
    raise TypeError(
        f"a {kind.__name__} cannot cross back from a guarded evaluation run by the fork "
        "backend (data only)"
    )


def _decode(item: Any) -> Any:
    tag, payload = item
    if tag == "v":
        return payload
    if tag in ("list", "tuple", "set", "frozenset"):
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](
            _decode(v) for v in payload
        )
    if tag == "dict":
        return {_decode(k): _decode(v) for k, v in payload}
    if tag == "decimal":
        return decimal.Decimal(payload)
    if tag == "fraction":
        return fractions.Fraction(*payload)
    if tag == "timedelta":
        return datetime.timedelta(*payload)
    if tag in ("date", "datetime", "time"):
        return getattr(datetime, tag).fromisoformat(payload)
    raise ValueError(f"unknown tag {tag!r} from a guarded evaluation")


def _error_payload(exc: BaseException) -> list[Any]:
    denial = getattr(exc, "denial", None)
    record = None
    if isinstance(denial, errors.Denial):
        record = [
            denial.kind,
            denial.target,
            denial.rule,
            denial.origin,
            denial.suggestion,
            denial.detail,
        ]
    return ["error", type(exc).__name__, str(exc), record]


def _rebuild(name: str, message: str, record: Any) -> BaseException:
    denial = errors.Denial(*record) if record else None
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, errors.RuleEvalError):
        if cls in (errors.EvalAttributeDenied, errors.EvalCallDenied):
            return cls(message, denial=denial)
        return cls(message)
    if name in _REBUILT_BUILTINS:
        exc: BaseException = getattr(builtins, name)(message)
        return exc
    return errors.EvalWorkerError(f"{name}: {message}")


def _operations() -> tuple[Any, Any, Any]:
    """``(fork, kill, setrlimit)``: the guard's under python-sb (it performs them for the eval
    workers: ``guard/evalbuiltins.worker_operations``), else the plain ones."""

    from pysandboxes.evalguard import api

    found: tuple[Any, Any, Any] | None = api.worker_operations()
    if found is not None:
        return found
    return os.fork, lambda pid: os.kill(pid, signal.SIGKILL), resource.setrlimit


class ForkBackend:
    """See the module docstring."""

    name = "fork"

    def run(self, source: str, mode: str, names: Mapping[str, Any] | None, rules: EvalRules) -> Any:
        compiled = engine.prepare(source, mode, rules)
        fork, kill, setrlimit = _operations()
        sys.stdout.flush()
        sys.stderr.flush()
        read_end, write_end = os.pipe()
        pid = fork()
        if pid == 0:  # pragma: no cover - the child (its outcome is asserted by the parent)
            os.close(read_end)
            self._child(compiled, names, setrlimit, write_end)
        os.close(write_end)
        try:
            data = self._collect(pid, read_end, rules.timeout + _GRACE, kill)
        finally:
            os.close(read_end)
        if data is None:
            raise errors.EvalTimeout(
                f"guarded evaluation ran past {rules.key('eval-timeout')} ({rules.timeout:g}s): "
                "its process was killed"
            )
        _pid, status = os.waitpid(pid, 0)
        if not data:
            if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
                raise errors.EvalTimeout("guarded evaluation used up its CPU time")
            raise errors.EvalWorkerError(f"the evaluation's process died (status {status})")
        payload = marshal.loads(data)
        if payload[0] == "error":
            raise _rebuild(payload[1], payload[2], payload[3])
        return _decode(payload[1])

    @staticmethod
    def _child(compiled: engine.Compiled, names: Any, setrlimit: Any, out: int) -> None:
        from pysandboxes.evalguard.worker import address_space

        code = 0
        try:
            limit = address_space(setrlimit) + 2 * compiled.rules.max_alloc + (64 << 20)
            setrlimit(resource.RLIMIT_AS, (limit, limit))
            cpu = int(compiled.rules.timeout) + 2
            setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            try:
                ns = engine.namespace(compiled, names, strict=True)
                result = engine.run(compiled, ns)
                value = result if compiled.mode == "eval" else engine.bound_names(ns)
                payload: list[Any] = ["ok", _encode(value)]
            except MemoryError as exc:
                payload = _error_payload(
                    exc
                    if isinstance(exc, errors.EvalMemoryError)
                    else errors.EvalMemoryError(
                        f"guarded evaluation ran out of its memory limit ({limit} bytes of "
                        "address space)"
                    )
                )
            except BaseException as exc:
                payload = _error_payload(exc)
            data = marshal.dumps(payload)
            sys.stdout.flush()
            view = memoryview(data)
            while view:
                view = view[os.write(out, view) :]
        except BaseException:
            code = 1
        finally:
            os._exit(code)

    @staticmethod
    def _collect(pid: int, fd: int, timeout: float, kill: Any) -> bytes | None:
        """Everything the child writes, or ``None`` (child killed) past ``timeout``."""

        deadline = time.monotonic() + timeout
        chunks: list[bytes] = []
        while True:
            left = deadline - time.monotonic()
            ready = select.select([fd], [], [], max(0.0, left))[0] if left > 0 else []
            if not ready:
                kill(pid)
                os.waitpid(pid, 0)
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


FORK = ForkBackend()
