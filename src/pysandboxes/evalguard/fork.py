"""The ``fork`` backend: hard bounds for one evaluation in a child of its own (the default,
the warm worker of ``evalguard/worker.py``, serves many).

The source is checked in the caller (a refusal costs no process); the run happens in a child
forked for this call, with ``RLIMIT_AS`` (the child's size, probed, plus twice
``eval-max-alloc``) and ``RLIMIT_CPU``; the caller waits at most ``eval-timeout`` (plus a
grace of 100 ms), then kills the child with ``SIGKILL``: a long C call (``re`` backtracking, a
sympy computation) ends there, and the caller gets :class:`~pysandboxes.errors.EvalTimeout`.
The result and an exception cross back as the worker's do (``evalguard/channel.py``: data and
classes of the modules the profile may import, through its restricted unpickler; the error as
the plain record partial mode rebuilds, denials included).

One process per call (a few milliseconds): choose it with ``backend="fork"`` where the bound
matters more than the latency. Linux only; under python-sb the guard performs the fork, the
kill and the limits (as for the worker: ``evalguard/worker.py``), with no ``python-api`` rule.
"""

from __future__ import annotations

import os
import pickle
import resource
import select
import signal
import sys
import time

from pysandboxes import errors
from pysandboxes.evalguard import channel, engine

if sys.platform == "win32":  # fork, rlimits, wait statuses: POSIX's (issue 19)
    raise ImportError("the fork backend of guarded evaluation needs fork (POSIX)")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from pysandboxes.evalguard.rules import EvalRules

_GRACE = 0.1


def _error(exc: BaseException) -> bytes:
    return channel.ERROR + pickle.dumps(channel.error_record(exc), channel.PROTOCOL)


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
        if data[:1] == channel.RESULT:
            return channel.loads_from_worker(data[1:], rules)
        try:
            record = channel.loads_plain(data[1:]) if data[:1] == channel.ERROR else None
        except Exception:  # whatever it sent, it is no error record
            record = None
        raise channel.rebuild(record, "guarded_eval")

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
                value = (
                    result if compiled.mode == "eval" else engine.bound_names(ns, compiled.rules)
                )
                try:
                    data = channel.RESULT + pickle.dumps(value, channel.PROTOCOL)
                except (pickle.PicklingError, TypeError, AttributeError) as exc:
                    raise TypeError(
                        f"the result of a guarded evaluation cannot cross back: {exc}"
                    ) from None
            except MemoryError as exc:
                data = _error(
                    exc
                    if isinstance(exc, errors.EvalMemoryError)
                    else errors.EvalMemoryError(
                        f"guarded evaluation ran out of its memory limit ({limit} bytes of "
                        "address space)"
                    )
                )
            except BaseException as exc:
                data = _error(exc)
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
