"""The ``worker`` backend, ``guarded_eval``'s default: evaluations in a warm worker process, so
that a timeout kills the worker -- one long C call included -- and the caller gets
:class:`~pysandboxes.errors.EvalTimeout`; the next evaluation starts a new worker.

Where the worker comes from:

- **under python-sb** (the rules armed by the guard): forked once from the program's own
  process at the first evaluation (:class:`Forked`). It inherits the kernel sandbox, the armed
  guard and every loaded module -- no exec, nothing widened, no right the program lacks (the
  guard itself performs the fork, the kill and the resource limits for it:
  ``guard/evalbuiltins.worker_operations``) -- and serves every profile;
- **outside python-sb** (``rules=``): a partial-mode worker (``partial.pool.Worker``) started
  under python-sb's default provider, or the one an ``os-sandbox=`` line of ``rules=`` names,
  with a rule file of the profile's ``eval-*`` lines (:class:`Spawned`), one per rule set; its
  socket is then taken over by the eval protocol (:func:`serve_spawned`).

Either way one process serves many evaluations (no process per call), one at a time, over
``evalguard/channel.py``: one round trip per evaluation, a host function in ``names`` runs in
the host and is called back. Before each evaluation the worker lowers its own resource limits
(``RLIMIT_AS``: its size when it started plus twice ``eval-max-alloc`` plus 128 MiB;
``RLIMIT_CPU``: the CPU time it used plus ``eval-timeout`` plus 2 s). The source is checked and
``names`` validated in the caller first: a refusal starts no process. Where no process can be
started, :class:`~pysandboxes.errors.EvalWorkerError` says why; nothing falls back silently.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import sys
import tempfile
import threading
import time
from pickle import dumps as _dumps

from pysandboxes import errors
from pysandboxes.evalguard import channel, engine

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from pysandboxes.evalguard.rules import EvalRules

#: Seconds over ``eval-timeout`` before the caller kills the worker (the worker's own clock
#: normally ends a runaway evaluation first, with a precise error).
GRACE = 0.5
_getpid = os.getpid
_select = select.select
_monotonic = time.monotonic
#: Seconds a new worker has to say it is ready.
START_TIMEOUT = 60.0
#: Address space a worker may add to its size at start, besides twice ``eval-max-alloc``.
SLACK = 128 << 20


def address_space(setrlimit: Callable[[int, tuple[int, int]], None]) -> int:
    """This process's address space in bytes, within 4 MiB, found by the kernel's own limit.

    ``/proc/self/statm`` is no file the rules grant a sandboxed program, so the size is
    probed instead: a binary search for the lowest ``RLIMIT_AS`` under which one more MiB
    can still be mapped (about 25 tries, well under a millisecond, once per worker). The
    soft limit is left unlimited up to the hard one; 0 when the limit cannot be set.
    """

    if sys.platform == "win32":  # pragma: no cover - no resource limits to probe with
        return 0
    import mmap
    import resource

    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS  # a new mapping each time (never reused)
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    low, high = 0, 1 << 47 if hard == resource.RLIM_INFINITY else hard
    probe = 1 << 20
    try:
        while high - low > 4 << 20:
            middle = (low + high) // 2
            try:
                setrlimit(resource.RLIMIT_AS, (middle, hard))
                mmap.mmap(-1, probe, flags=flags).close()
                high = middle
            except (MemoryError, OSError) as exc:
                if isinstance(exc, OSError) and exc.errno != 12:  # ENOMEM: over the limit
                    raise
                low = middle
    except OSError:
        return 0
    finally:
        with contextlib.suppress(OSError, MemoryError):
            setrlimit(resource.RLIMIT_AS, (hard, hard))
    return high - probe


def make_limits(
    setrlimit: Callable[[int, tuple[int, int]], None], base: int
) -> Callable[[EvalRules], None]:
    """The worker's ``limits(rules)``, called before each evaluation (see the module
    docstring); a limit is set again only when it must change. Without the ``resource``
    module (Windows) no kernel limit is set: the host's kill at the timeout remains."""

    if sys.platform == "win32":  # pragma: no cover - no resource module

        def no_limits(rules: EvalRules) -> None:
            return None

        return no_limits
    import resource

    as_hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    infinity = resource.RLIM_INFINITY
    current = {"as": -1, "cpu": -1, "checked": -1e9, "timeout": 0.0}
    monotonic = time.monotonic

    def capped(value: int, hard: int) -> int:
        return value if hard == infinity else min(value, hard)

    def limits(rules: EvalRules) -> None:
        if base:
            want = capped(base + 2 * rules.max_alloc + SLACK, as_hard)
            if want != current["as"]:
                setrlimit(resource.RLIMIT_AS, (want, as_hard))
                current["as"] = want
        now = monotonic()
        if now - current["checked"] < 1.0 and current["timeout"] >= rules.timeout:
            return  # under a second of wall time since: under a second of CPU time used
        usage = resource.getrusage(resource.RUSAGE_SELF)
        used = usage.ru_utime + usage.ru_stime
        # Enough for one evaluation from now on (plus the second until the next look), and
        # not much more.
        want = capped(int(used + rules.timeout) + 3, cpu_hard)
        if want != current["cpu"]:
            setrlimit(resource.RLIMIT_CPU, (want, cpu_hard))
            current["cpu"] = want
        current["checked"] = now
        current["timeout"] = rules.timeout

    return limits


# -- the two kinds of worker process --------------------------------------------------------------


class Forked:
    """The worker forked once from this (sandboxed) process: see the module docstring."""

    kind = "forked"

    def __init__(self, operations: Any) -> None:
        self.fork, self._kill, self.setrlimit = operations
        self.pid = 0
        self.reader: channel.Reader | None = None
        self.write_fd = -1
        self.owner = os.getpid()

    def ended(self) -> bool:
        """Whether it is known to have ended without reading its channel: never here (the
        forked worker is the process itself: its channel's end of file says it)."""

        return False

    def start(self) -> None:
        to_worker = os.pipe()
        to_host = os.pipe()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        try:
            pid = self.fork()
        except BaseException:
            for fd in (*to_worker, *to_host):
                os.close(fd)
            raise
        if pid == 0:  # pragma: no cover - the worker (its answers are asserted by the host)
            code = 0
            try:
                os.close(to_worker[1])
                os.close(to_host[0])
                limits = make_limits(self.setrlimit, address_space(self.setrlimit))
                channel.Server(to_worker[0], to_host[1], limits).serve()
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(to_worker[0])
        os.close(to_host[1])
        self.pid = pid
        self.reader = channel.Reader(to_host[0])
        self.write_fd = to_worker[1]
        _await_ready(self)

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self._kill(self.pid)

    def finish(self) -> int | None:
        """Close the channel and reap the process; its status (negative: the signal)."""

        for fd in (self.write_fd, self.reader.fd if self.reader else -1):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.write_fd = -1
        self.reader = None
        if not self.pid or sys.platform == "win32":  # (a forked worker: never on Windows)
            return None
        pid, self.pid = self.pid, 0
        deadline = time.monotonic() + 5
        while True:
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                return None
            if done:
                return os.waitstatus_to_exitcode(status)
            if time.monotonic() > deadline:
                with contextlib.suppress(OSError):
                    self._kill(pid)
                deadline = time.monotonic() + 5
            time.sleep(0.002)


class Spawned:
    """A partial-mode worker under a provider, taken over by the eval protocol."""

    kind = "spawned"

    def __init__(self, path: str, cwd: str, keyword_rules: dict[str, list[str]]) -> None:
        from pysandboxes.partial.pool import Worker

        self.worker = Worker(
            path,
            keyword_rules=dict(keyword_rules),
            threads=1,
            max_restarts=1 << 30,
            cwd=cwd,
            kind="eval-worker",
        )
        self.pending: Any = None
        self.reader: channel.Reader | None = None
        self.write_fd = -1
        self.owner = os.getpid()

    @property
    def pid(self) -> int:
        return self.worker.pid or 0

    def start(self) -> None:
        pending = self.worker._submit(serve_spawned, (), {}, None)
        self.pending = pending
        started = pending.started
        self.reader = channel.Reader(started.sock.fileno())
        self.reader.buffer, started.buffer = started.buffer, b""
        self.write_fd = started.sock.fileno()
        _await_ready(self)

    def kill(self) -> None:
        if self.pending is not None:
            self.pending.started.kill()

    def ended(self) -> bool:
        """Whether the worker's outer process (the provider's, or its tree's holder) has
        ended. The worker inside may still be dying then, its end of the channel still open
        (a holder killed by SIGKILL takes its PID namespace down a moment later), so the
        channel alone would not say it yet."""

        pending = self.pending
        return pending is not None and pending.started.process.poll() is not None

    def finish(self) -> int | None:
        pending, self.pending = self.pending, None
        self.reader = None
        self.write_fd = -1
        if pending is None:
            return None
        started = pending.started
        self.worker._died(started, "")  # closes the socket, reaps, lets a new one start
        status: int | None = started.process.returncode
        return status

    def close(self) -> None:
        self.finish()
        with contextlib.suppress(Exception):
            self.worker.close()


def _await_ready(process: Forked | Spawned) -> None:
    try:
        got = process.reader.read(time.monotonic() + START_TIMEOUT)  # type: ignore[union-attr]
    except EOFError:
        got = None
    if got is not None and got[0] == channel.READY:
        return
    process.kill()
    status = process.finish()
    raise errors.EvalWorkerError(
        f"the evaluation's worker process did not start (status {status}; its message, if "
        "any, is on standard error)"
    )


def serve_spawned() -> None:
    """Run in a partial-mode worker: serve evaluations on its socket until the host closes it
    (see ``partial.worker.take_channel``)."""

    from pysandboxes.evalguard import api
    from pysandboxes.partial.worker import take_channel

    fd, ahead = take_channel()
    operations = api.worker_operations()
    setrlimit: Callable[[int, tuple[int, int]], None]
    if operations is not None:
        setrlimit = operations[2]
    elif sys.platform == "win32":  # pragma: no cover - make_limits sets none there

        def setrlimit(which: int, limits: tuple[int, int]) -> None:
            return None

    else:
        import resource

        setrlimit = resource.setrlimit

    server = channel.Server(fd, fd, make_limits(setrlimit, address_space(setrlimit)))
    server.reader.buffer = ahead
    server.serve()


# -- the backend ----------------------------------------------------------------------------------


class WorkerBackend:
    """See the module docstring."""

    name = "worker"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._processes: dict[Any, tuple[Forked | Spawned, threading.Lock]] = {}
        self._local = threading.local()
        #: The process serving a rules object, keyed by the object (identity; no ``id()``,
        #: an audit event under python-sb): the per-call look-up.
        self._by_rules: dict[EvalRules, tuple[Forked | Spawned, threading.Lock]] = {}
        self._dir: str | None = None
        atexit.register(self.close)

    # -- which process ------------------------------------------------------------------------

    def _key_and_factory(self, rules: EvalRules) -> tuple[Any, Callable[[], Forked | Spawned]]:
        from pysandboxes.evalguard import api

        if api.armed_policy() is not None:
            operations = api.worker_operations()
            if operations is None or not hasattr(os, "fork"):
                raise errors.EvalWorkerError(
                    "guarded evaluation needs a worker process for its hard bounds and none "
                    "can be started here (no fork on this platform); pass backend='in-process' "
                    "to accept the bounds that hold in-process (docs/eval.md, Limits)"
                )
            return "forked", lambda: Forked(operations)
        if getattr(sys, "_pysandboxes_child", None):
            raise errors.EvalWorkerError(
                "under python-sb the worker of guarded_eval is forked by the guard for the "
                "eval-* lines of the rule file, and this rule file has none (rules= was "
                "passed): write the eval-* lines in the rule file, or pass "
                "backend='in-process' to accept the bounds that hold in-process"
            )
        lines = tuple(f"{line.key}={line.value}" for line in rules.lines)
        others = api.worker_lines(rules)
        key = (*lines, *others)

        def spawn() -> Spawned:
            # The rules go to the worker as rules=, origin <arg> (what the caller passed),
            # learn=false among them; the rule file the plan needs is empty and is removed
            # once the worker's plan has read it (issue 26 defect 11: it was left in the
            # temporary directory, and named as the origin of the caller's rules).
            keyword: dict[str, list[str]] = {}
            for line in (*others, *lines, "learn=false"):
                name, _eq, value = line.partition("=")
                keyword.setdefault(name, []).append(value)
            if self._dir is None:  # named so that a later run sweeps it if this one is killed
                from pysandboxes.launch.tmpdir import owned_prefix

                self._dir = tempfile.mkdtemp(prefix=owned_prefix("eval"))
            path = os.path.join(self._dir, f"eval{len(self._processes)}.py-sandboxes")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("# a guarded evaluation's worker: its rules are the caller's\n")
            try:
                return Spawned(path, self._dir, keyword)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(path)

        return key, spawn

    def _process_for(self, rules: EvalRules) -> tuple[Forked | Spawned, threading.Lock]:
        key, factory = self._key_and_factory(rules)
        with self._lock:
            found = self._processes.get(key)
            if found is not None and found[0].owner != os.getpid():
                found = None  # this process is a fork of the one that started that worker
            if found is None:
                try:
                    process = factory()
                except errors.SandBoxError as exc:
                    raise _cannot_start(exc) from exc
                found = self._processes[key] = (process, threading.Lock())
            return found

    @staticmethod
    def _ensure_started(process: Forked | Spawned) -> None:
        if process.reader is not None:
            return
        try:
            process.start()
        except errors.EvalWorkerError:
            raise
        except (OSError, errors.SandBoxError) as exc:
            raise _cannot_start(exc) from exc

    # -- one evaluation -----------------------------------------------------------------------

    def run(self, source: str, mode: str, names: Mapping[str, Any] | None, rules: EvalRules) -> Any:
        compiled = engine.prepare(source, mode, rules)  # a refusal costs no process
        given = dict(names) if names else {}
        plain = channel.plain_names(given)
        if given and not (plain and _plain_keys(given)):
            engine.namespace(compiled, given, strict=True)  # the in-process errors, here
        found = self._by_rules.get(rules)
        if found is None or found[0].owner != _getpid():
            found = self._by_rules[rules] = self._process_for(rules)
        process, lock = found
        if getattr(self._local, "serving", None) is process:
            raise errors.EvalWorkerError(
                "a host function called guarded_eval while its own evaluation waits for it, on "
                "the same worker: not supported (evaluate before or after, or pass "
                "backend='in-process' to the inner call)"
            )
        with lock:
            if process.reader is not None and (
                process.ended() or _ended_between_calls(process.reader)
            ):
                process.finish()  # it ended since its last answer (killed, or its limits)
            if process.reader is None:
                self._ensure_started(process)
            tops = engine.runtime_for(rules).module_tops
            table: list[Any] = []
            message = (rules.profile, source, mode, given)
            if plain:
                request = channel.frame(channel.EVALUATE, _dumps(message, channel.PROTOCOL))
            else:
                body = channel.dumps_for_worker(message, table, tops)
                request = channel.frame(channel.EVALUATE_REFS, body)
            start = _monotonic()
            deadline = start + rules.timeout + GRACE
            try:
                channel.write_all(process.write_fd, request)
            except OSError:  # it had ended before this call: it did not run; a new one does
                process.finish()
                self._ensure_started(process)
                channel.write_all(process.write_fd, request)
            answered = compiled.answered
            spin = channel.SPIN_HOST if answered < channel.SPIN_HOST / 2 else 0.0
            if process.reader is not None:
                # what an honest worker may answer (it refuses a larger result itself),
                # with room for the frame's own fields: a larger frame is refused unread
                process.reader.max_frame = rules.max_alloc + rules.max_output + (1 << 20)
            self._local.serving = process
            try:
                kind, body, host_error = self._exchange(process, rules, table, tops, deadline, spin)
            except BaseException:
                # Stopped before the answer came (Ctrl-C, a host function's SystemExit): the
                # worker is still running that evaluation, and would answer the next request
                # with it. It is replaced.
                if process.reader is not None:
                    process.kill()
                    process.finish()
                raise
            finally:
                self._local.serving = None
                compiled.answered = _monotonic() - start
            return _outcome(process, rules, kind, body, host_error)

    @staticmethod
    def _exchange(
        process: Forked | Spawned,
        rules: EvalRules,
        table: list[Any],
        tops: frozenset[str],
        deadline: float,
        spin: float,
    ) -> tuple[bytes, bytes, BaseException | None]:
        """Serve the worker's host calls until its answer comes: ``(kind, body, the last
        exception a host function raised)``."""

        host_error: BaseException | None = None
        reader = process.reader
        assert reader is not None
        while True:
            try:
                got = reader.read(deadline, spin)
            except EOFError:
                raise _died(process.finish(), rules) from None
            if got is None:
                process.kill()
                process.finish()
                raise errors.EvalTimeout(
                    f"guarded evaluation ran past {rules.key('eval-timeout')} "
                    f"({rules.timeout:g}s): its worker was killed"
                )
            kind, body = got
            if kind != channel.HOST_CALL:
                return kind, body, host_error
            answer, host_error = channel.host_call(body, table, rules, tops)
            if _monotonic() > deadline:
                process.kill()
                process.finish()
                raise errors.EvalTimeout(
                    f"guarded evaluation ran past {rules.key('eval-timeout')} "
                    f"({rules.timeout:g}s) while a host function ran: its worker was killed"
                )
            try:
                channel.write_all(process.write_fd, answer)
            except OSError:  # it died while the host function ran
                raise _died(process.finish(), rules) from None

    def pid(self, rules: EvalRules) -> int:
        """The process id the host holds for the worker serving ``rules`` now (0 when none
        runs): the worker itself when forked under python-sb; for a spawned worker, the
        provider's outer process (the holder of its PID namespace, bubblewrap...). Killing
        that outer process ends the worker a moment later, not at once: until the worker
        itself has ended it may still answer (``tests/redteam/eval``, ``kill_tree``)."""

        process, _lock = self._process_for(rules)
        return process.pid if process.reader is not None else 0

    def close(self) -> None:
        with self._lock:
            processes, self._processes = list(self._processes.values()), {}
            self._by_rules = {}
            folder, self._dir = self._dir, None
        for process, _lock in processes:
            with contextlib.suppress(Exception):  # closing at exit: nothing left to report to
                if isinstance(process, Spawned):
                    process.close()
                elif process.owner == os.getpid():
                    process.finish()
        if folder is not None:  # the workers' folder (their rule files are already gone)
            import shutil

            shutil.rmtree(folder, ignore_errors=True)


def _ended_between_calls(reader: channel.Reader) -> bool:
    """Whether a worker that owes no answer has ended: between two evaluations it sends
    nothing, so its end of the channel being readable (end of file, or a reset) means it is
    gone. Asked before a request is written, so that a worker that died idle is replaced
    without the request being lost (a write to a dead peer can succeed, and the reset comes
    only at the read)."""

    return bool(reader.buffer) or bool(_select((reader.fd,), (), (), 0)[0])


def _outcome(
    process: Forked | Spawned,
    rules: EvalRules,
    kind: bytes,
    body: bytes,
    host_error: BaseException | None,
) -> Any:
    """The value of an ``R`` answer, or the exception of an ``X`` one."""

    if kind == channel.RESULT:
        out, value = channel.loads_from_worker(body, rules)
        _emit(out)
        return value
    if kind != channel.ERROR:
        process.kill()
        process.finish()
        raise errors.EvalWorkerError("the evaluation's worker broke the protocol")
    out, record, retire = channel.loads_plain(body)
    _emit(out)
    if retire:  # it ran out of memory: a fresh worker for the next evaluation
        process.finish()
    if host_error is not None and _same(host_error, record):
        raise host_error  # a host function's exception comes back as itself
    raise channel.rebuild(record, "guarded_eval")


def _plain_keys(names: dict[str, Any]) -> bool:
    for name in names:
        if type(name) is not str or not name.isidentifier() or name.startswith(("_sb_", "__")):
            return False
    return True


def _same(error: BaseException, record: Any) -> bool:
    kind = type(error)
    return (
        type(record) is dict
        and record.get("qualname") == kind.__qualname__
        and record.get("module") == kind.__module__
        and record.get("message") == str(error)
    )


def _emit(out: str) -> None:
    if out:
        sys.stdout.write(out)


def _died(status: int | None, rules: EvalRules) -> BaseException:
    import signal

    xcpu = getattr(signal, "SIGXCPU", 0)  # POSIX only
    if status is not None and xcpu and status in (-xcpu, 128 + xcpu):
        return errors.EvalTimeout(
            f"guarded evaluation used up its CPU time ({rules.key('eval-timeout')}): its worker "
            "was killed by the kernel"
        )
    return errors.EvalWorkerError(
        f"the evaluation's worker process died (status {status}); the evaluation is not run "
        "again, the next one starts a new worker"
    )


def _cannot_start(exc: BaseException) -> errors.EvalWorkerError:
    return errors.EvalWorkerError(
        f"guarded evaluation needs a worker process for its hard bounds and none can be "
        f"started: {exc}. Pass backend='in-process' to accept the bounds that hold in-process "
        "(docs/eval.md, Limits)"
    )


WORKER = WorkerBackend()
