"""The ``worker`` backend: evaluations in a warm partial-mode worker (issue 13), so that a
timeout kills the worker -- one long C call included -- and the caller gets
:class:`~pysandboxes.errors.EvalTimeout`; the next evaluation starts a new worker.

One worker per profile's rules, started at its first evaluation and reused (no process per
call). Its rule file holds the profile's ``eval-*`` lines and nothing else: the worker runs
under the default provider of python-sb with no file, network or import right beyond the
interpreter's own, and inside it the same checks and in-process bounds apply (the worker's
python-sb arms the eval rules, and :func:`evaluate` runs the source there in-process). The
source is checked in the caller first, so a refused source costs no process. Arguments and
results cross pickled, through partial mode's restricted unpickler (data only: numbers,
strings, containers, dates, decimals, fractions); exceptions come back with their classes and
denials.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import tempfile
import threading

from pysandboxes import errors
from pysandboxes.evalguard import engine

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from pysandboxes.evalguard.rules import EvalRules

#: Seconds over ``eval-timeout`` before the caller kills the worker (the worker's own clock
#: normally ends a runaway evaluation first, with a precise error).
GRACE = 0.5


def evaluate(source: str, mode: str, names: dict[str, Any], profile: str | None) -> Any:
    """Run in the worker: the in-process guarded evaluation, under the worker's armed rules."""

    from pysandboxes.evalguard.api import guarded_eval

    return guarded_eval(source, names, profile, mode, backend="in-process")


class WorkerBackend:
    """See the module docstring."""

    name = "worker"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._workers: dict[tuple[str, ...], Any] = {}
        self._dir: str | None = None
        atexit.register(self.close)

    def _worker_for(self, rules: EvalRules) -> Any:
        from pysandboxes.partial.pool import Worker

        key = tuple(f"{line.key}={line.value}" for line in rules.lines)
        with self._lock:
            found = self._workers.get(key)
            if found is None:
                if self._dir is None:
                    self._dir = tempfile.mkdtemp(prefix="pysb-eval-")
                path = os.path.join(self._dir, f"eval{len(self._workers)}.py-sandboxes")
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write("# the eval-* lines of one profile (pysandboxes.evalguard)\n")
                    handle.write("learn=false\n")
                    handle.write("".join(line + "\n" for line in key))
                found = self._workers[key] = Worker(
                    path, threads=1, max_restarts=1 << 30, cwd=self._dir
                )
            return found

    def run(self, source: str, mode: str, names: Mapping[str, Any] | None, rules: EvalRules) -> Any:
        from pysandboxes.partial.errors import CallTimeoutError, WorkerDiedError

        engine.prepare(source, mode, rules)  # a refusal costs no process
        worker = self._worker_for(rules)
        try:
            return worker.call(
                evaluate,
                (source, mode, dict(names or {}), rules.profile),
                {},
                timeout=rules.timeout + GRACE,
            )
        except CallTimeoutError:
            raise errors.EvalTimeout(
                f"guarded evaluation ran past {rules.key('eval-timeout')} ({rules.timeout:g}s):"
                " its worker was killed"
            ) from None
        except WorkerDiedError as exc:
            raise errors.EvalWorkerError(f"the evaluation's worker died: {exc}") from None

    def close(self) -> None:
        with self._lock:
            workers, self._workers = list(self._workers.values()), {}
        for worker in workers:
            with contextlib.suppress(Exception):  # closing at exit: nothing left to report to
                worker.close()


WORKER = WorkerBackend()
