"""One sandboxed worker process and the calls in flight to it (the parent's side).

:class:`Worker` is also the internal entry point other packages use (the eval guard):
``Worker(rules=..., **keyword_rules).call(function, args, kwargs, timeout=...)`` runs
``function`` in a worker sandboxed by those rules, with the guarantees below, and
``close()`` ends it.

- **Transport**: a socketpair, frames of ``partial.worker`` (length, kind, id).
- **Waiting**: the callers take turns reading the socket (whoever holds the read lock reads
  frames and hands each result to its caller), so a sequential caller reads its own answer with
  no thread hand-off; ``async`` callers are served by a pump thread that runs while they wait.
- **At most once**: a worker that ends while calls are in flight fails each of them at once
  with :class:`WorkerDiedError` (exit status or signal); nothing is sent again. The next call
  starts a new worker, up to ``max_restarts`` times (``restarts`` counts them).
- **Timeouts and cancellation** kill the worker (the only way to stop a function in the middle
  of a C call), fail the calls in flight, and let the next call start a new one.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import select
import threading
import time
import weakref

from pysandboxes.errors import SandBoxError
from pysandboxes.partial import results, shipping
from pysandboxes.partial import worker as _w
from pysandboxes.partial.errors import (
    CallCancelledError,
    CallTimeoutError,
    PartialModeError,
    RestartBudgetExceeded,
    UnsafeResultError,
    WorkerDiedError,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from pysandboxes.partial.spawn import Started

#: Seconds a new worker has to arm its guard and say it is ready.
START_TIMEOUT = 60.0
#: Default largest result, pickled (bytes).
DEFAULT_MAX_RESULT = 64 << 20
#: Slack over ``max_result`` for an error record before the frame counts as a protocol breach.
_ERROR_SLACK = 1 << 20


class _Pending:
    """One call in flight."""

    __slots__ = ("body", "callback", "done", "error", "kind", "started", "stopped_by", "token")

    def __init__(
        self, started: Started, callback: Callable[[_Pending], None] | None, token: bytes
    ) -> None:
        self.started = started
        #: This call's secret: only an answer that carries it is this call's (issue 25).
        self.token = token
        self.callback = callback
        self.done = False
        self.kind = b""
        self.body = b""
        self.error: BaseException | None = None
        #: ``timeout`` or ``cancel`` when this call's own expiry killed the worker.
        self.stopped_by = ""


class Worker:
    """A sandboxed worker for one set of rules (see the module docstring).

    ``rules``: a rule file (default: located as ``python-sb`` would for the caller);
    ``keyword_rules``: rule lines (``{"python_import": "json"}``; refused under the lock);
    ``learn``: ``True`` or a file, as ``--learn``; ``threads``: how many sync calls run at once;
    ``max_result``: the largest pickled result; ``max_restarts``: how many new workers after
    the first; ``returns``: what results may hold (``results.allowed_globals``);
    ``init_fn``: a function run in each new worker before its first call; ``kind``: the
    program kind its workers start as (``worker``; ``eval-worker`` for guarded evaluation's,
    ``launch/start.py``); ``raw_output``: the worker writes to the caller's standard error
    itself, control sequences included (default: relayed, made harmless: ``partial.output``).
    """

    def __init__(
        self,
        rules: str | None = None,
        *,
        keyword_rules: dict[str, Any] | None = None,
        learn: str | bool | None = None,
        timeout: float | None = None,
        threads: int = 8,
        max_result: int = DEFAULT_MAX_RESULT,
        max_restarts: int = 10,
        returns: str | Iterable[type] = "data",
        init_fn: Callable[[], Any] | None = None,
        caller_file: str | None = None,
        cwd: str | None = None,
        path0: str | None = None,
        kind: str = "worker",
        raw_output: bool = False,
    ) -> None:
        from pysandboxes.partial.spawn import plan_worker

        if threads < 1:
            raise PartialModeError(f"threads= must be at least 1, not {threads}")
        if max_result < 1:
            raise PartialModeError(f"max_result= must be positive, not {max_result}")
        _check_timeout(timeout)
        self.cwd = cwd or os.getcwd()
        self.plan = plan_worker(rules, keyword_rules, learn, self.cwd, caller_file)
        self.timeout = timeout
        self.threads = threads
        self.max_result = max_result
        self.max_restarts = max_restarts
        self.allowed, self.anything = results.allowed_globals(returns)
        self.init_fn = init_fn
        self.path0 = path0 if path0 is not None else _caller_path0()
        self.kind = kind
        self.raw_output = raw_output
        #: New workers started after the first (deaths, timeouts, cancellations).
        self.restarts = 0
        self.starts = 0
        self._lock = threading.Lock()
        self._cv = threading.Condition(self._lock)
        #: Callers asleep on ``_cv`` (changed with ``_lock`` held): with none, nobody is
        #: notified (a ``notify_all`` is Python code, paid twice a call otherwise).
        self._sleepers = 0
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._started: Started | None = None
        self._pending: dict[int, _Pending] = {}
        self._ids = itertools.count(1)
        #: Function -> its id in the worker and its pickled form (weak: a function made anew
        #: at each call of a factory leaves with its last reference).
        self._functions: weakref.WeakKeyDictionary[Any, list[Any]] = weakref.WeakKeyDictionary()
        self._fids = itertools.count(1)
        self._defined: set[int] = set()
        self._tokens = b""
        self._token_offset = 0
        self._async_waiting = 0
        self._pump_running = False
        self._closed = False

    # -- life cycle ------------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The worker's process id (the provider's outer process), when one runs."""

        started = self._started
        return started.process.pid if started is not None else None

    def start(self) -> None:
        """Start the worker now (otherwise the first call does)."""

        with self._write_lock:
            self._ensure_started()

    def _ensure_started(self) -> Started:
        """The running worker, starting one if needed (write lock held)."""

        if self._closed:
            raise PartialModeError("this worker was closed")
        started = self._started
        if started is not None:
            return started
        from pysandboxes.partial.spawn import start_worker

        if self.starts > 0:
            if self.restarts >= self.max_restarts:
                raise RestartBudgetExceeded(
                    f"the sandboxed worker ended {self.restarts + 1} times; max_restarts="
                    f"{self.max_restarts} allows no new one"
                )
            self.restarts += 1
        self.starts += 1
        started = start_worker(
            self.plan,
            threads=self.threads,
            max_result=self.max_result,
            path0=self.path0,
            kind=self.kind,
            raw_output=self.raw_output,
        )
        self._await_ready(started)
        with self._lock:
            self._started = started
            self._defined = set()
        if self.init_fn is not None:
            init = self.init_fn
            self._send_locked(started, init, (), {}, None, wait=True)
        return started

    def _await_ready(self, started: Started) -> None:
        """Wait for the worker's ``K`` frame: a worker that cannot start (a provider's step
        refused, the guard could not arm) is an error here, at ``start()``, with its status
        (its own message is on stderr), rather than at the first call."""

        timed_out = ended = False
        try:
            frame = self._read_frame(started, START_TIMEOUT)
            timed_out = frame is None
        except EOFError:
            frame, ended = None, True
        except (OSError, _Breach):
            frame = None
        if frame is not None and frame[0] == _w.READY:
            return
        if not ended:  # a worker that ended on its own is let end: its status says why
            started.kill()
        status = started.finish()
        late = f"it did not start within {START_TIMEOUT:g} s"
        why = late if timed_out else _status_text(status)
        raise WorkerDiedError(
            f"the sandboxed worker could not start: {why} (its message is on stderr)",
            status=status,
        )

    def close(self) -> None:
        """End the worker (calls still in flight fail with ``WorkerDiedError``)."""

        self._closed = True
        started = self._started
        if started is not None:
            with contextlib.suppress(OSError):
                started.sock.shutdown(2)  # EOF: the worker's loop ends by itself
            started.finish()
            self._died(started, "", finished=True)

    def __enter__(self) -> Worker:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- calls -----------------------------------------------------------------------------------

    def call(
        self,
        function: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        allowed: tuple[frozenset[tuple[str, str]], bool] | None = None,
    ) -> Any:
        """Run ``function(*args, **kwargs)`` in the worker and return its result (or raise its
        exception); ``timeout`` (default: the worker's) kills the worker when it expires;
        ``allowed``: ``results.allowed_globals(...)`` for this call instead of the worker's."""

        timeout = self.timeout if timeout is None else timeout
        _check_timeout(timeout)
        pending = self._submit(function, args, kwargs or {}, None)
        try:
            self._wait(pending, None if timeout is None else time.monotonic() + timeout)
        except BaseException:  # KeyboardInterrupt: the call is stopped with its worker
            self._stop(pending, "cancel")
            raise
        _drain(pending)
        return self._outcome(pending, function, allowed)

    async def acall(
        self,
        function: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        allowed: tuple[frozenset[tuple[str, str]], bool] | None = None,
    ) -> Any:
        """:meth:`call` for ``asyncio``: cancelling the awaiting task kills the worker too."""

        import asyncio

        timeout = self.timeout if timeout is None else timeout
        _check_timeout(timeout)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def settle(_pending: _Pending) -> None:
            def done() -> None:
                if not future.done():
                    future.set_result(None)

            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                loop.call_soon_threadsafe(done)

        pending = self._submit(function, args, kwargs or {}, settle)
        with self._lock:
            self._async_waiting += 1
            start_pump = not self._pump_running
            self._pump_running = True
        if start_pump:
            threading.Thread(target=self._pump_thread, name="pysb-pump", daemon=True).start()
        try:
            if timeout is None:
                await future
            else:
                try:
                    await asyncio.wait_for(asyncio.shield(future), timeout)
                except TimeoutError:
                    self._stop(pending, "timeout")
                    await future
        except asyncio.CancelledError:
            self._stop(pending, "cancel")
            raise
        finally:
            with self._lock:
                self._async_waiting -= 1
        _drain(pending)
        return self._outcome(pending, function, allowed)

    def _function_entry(self, function: Callable[..., Any]) -> list[Any]:
        """``[id in the worker, pickled form or None]`` of ``function`` (write lock held)."""

        entry = self._functions.get(function)
        if entry is None:
            entry = self._functions[function] = [next(self._fids), None]
        return entry

    def _submit(
        self,
        function: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        callback: Callable[[_Pending], None] | None,
    ) -> _Pending:
        with self._write_lock:
            started = self._ensure_started()
            return self._send_locked(started, function, args, kwargs, callback)

    def _send_locked(
        self,
        started: Started,
        function: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        callback: Callable[[_Pending], None] | None,
        *,
        wait: bool = False,
        retry: bool = True,
    ) -> _Pending:
        entry = self._function_entry(function)
        fid = entry[0]
        frames = b""
        if fid not in self._defined:
            payload = entry[1]
            if payload is None:
                try:
                    payload = shipping.dumps(function)
                except Exception as exc:
                    raise PartialModeError(
                        f"{_name(function)} cannot be sent to the sandbox: {exc} (everything "
                        "it refers to must be picklable)"
                    ) from exc
                entry[1] = payload
            frames += _w.encode_frame(_w.DEFINE, fid, payload)
        try:
            body = shipping.dumps_call(fid, args, kwargs)
        except Exception as exc:
            raise PartialModeError(
                f"the arguments of {_name(function)} cannot be sent to the sandbox: {exc}"
            ) from exc
        ident = next(self._ids) & 0xFFFFFFFF
        pending = _Pending(started, callback, self._token())
        with self._lock:
            self._pending[ident] = pending
        try:
            started.sock.sendall(frames + _w.encode_frame(_w.CALL, ident, body, pending.token))
        except OSError as exc:
            # The worker had closed its end before the call was whole: it cannot have run.
            with self._lock:
                self._pending.pop(ident, None)
            self._died(started, "")
            if retry:
                return self._send_locked(
                    self._ensure_started(), function, args, kwargs, callback, retry=False
                )
            raise WorkerDiedError(
                f"the sandboxed worker ended before {_name(function)} was sent ({exc}); it "
                "did not run"
            ) from None
        self._defined.add(fid)
        if wait:  # init_fn: its failure is the caller's error (the write lock is held)
            self._wait(pending, None)
            self._outcome(pending, function)
        return pending

    def _token(self) -> bytes:
        """A fresh call token (write lock held): 8 random bytes, drawn 512 at a time (one
        ``os.urandom`` a call would cost a system call; the worker sees no unused one)."""

        offset = self._token_offset
        if offset >= len(self._tokens):
            self._tokens, offset = os.urandom(8 * 512), 0
        self._token_offset = offset + 8
        return self._tokens[offset : offset + 8]

    def _wait(self, pending: _Pending, deadline: float | None) -> None:
        while not pending.done:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                self._stop(pending, "timeout")
                deadline = None
                continue
            if self._read_lock.acquire(blocking=False):
                try:
                    while not pending.done:
                        remaining = None if deadline is None else deadline - time.monotonic()
                        if remaining is not None and remaining <= 0:
                            break
                        self._pump(pending.started, remaining)
                finally:
                    self._read_lock.release()
                    self._wake_sleepers()
            else:
                with self._cv:
                    # Asleep only while another caller reads: the reader notifies the sleepers
                    # when it lets the read lock go (after releasing it, with ``_lock`` held).
                    if not pending.done and self._read_lock.locked():
                        self._sleepers += 1
                        try:
                            self._cv.wait(remaining)
                        finally:
                            self._sleepers -= 1

    def _wake_sleepers(self) -> None:
        """Notify the callers asleep on ``_cv``, if any (the read lock is free, or a call of
        theirs may be done)."""

        with self._lock:
            if self._sleepers:
                self._cv.notify_all()

    def _pump_thread(self) -> None:
        """Reads for the ``async`` callers while any waits (they cannot block their loop)."""

        while True:
            with self._lock:
                if self._async_waiting <= 0:
                    self._pump_running = False
                    return
                started = self._started
            if started is None or not self._read_lock.acquire(timeout=0.05):
                time.sleep(0.001) if started is None else None
                continue
            try:
                self._pump(started, 0.05)
            finally:
                self._read_lock.release()
                self._wake_sleepers()

    def _pump(self, started: Started, timeout: float | None) -> None:
        """Read one frame from ``started`` (read lock held) and hand it to its call; a worker
        that ended fails every call in flight."""

        if self._started is not started:
            return
        try:
            frame = self._read_frame(started, timeout)
        except _Breach:
            self._stop_started(started)
            self._died(started, "it sent a frame larger than the result limit")
            return
        except (EOFError, OSError):
            self._died(started, "")
            return
        if frame is None:
            return
        kind, ident, token, body = frame
        with self._lock:
            pending = self._pending.get(ident)
            forged = pending is None or token != pending.token or kind not in _ANSWERS
            if not forged:
                del self._pending[ident]
                assert pending is not None
                pending.kind, pending.body, pending.done = kind, body, True
                if self._sleepers:
                    self._cv.notify_all()
        if forged:
            # An answer no call of ours asked for (a guessed id, a wrong token): the worker
            # breaks the protocol; it is ended and its calls fail (never a forged result).
            self._stop_started(started)
            self._died(started, "it sent an answer that no call is waiting for")
            return
        assert pending is not None
        if pending.callback is not None:
            pending.callback(pending)

    def _read_frame(
        self, started: Started, timeout: float | None
    ) -> tuple[bytes, int, bytes, bytes] | None:
        """The next frame of ``started`` (``None`` if ``timeout`` passes first); reads ahead,
        so that a small frame costs one system call. ``timeout`` covers the whole frame: a
        worker that trickles its reply a byte at a time does not extend it (issue 25)."""

        # A frame that comes in pieces grows in a bytearray (appending to bytes would copy it
        # whole at each piece: quadratic in a trickled 64 MB reply); kept across reads.
        buffer: bytes | bytearray = started.growing or started.buffer
        started.growing = None
        deadline = None if timeout is None else time.monotonic() + timeout
        sock = started.sock
        limit = self.max_result + _ERROR_SLACK + _w.HEADER
        while True:
            need = _w.HEADER
            if len(buffer) >= _w.HEADER:
                need = int.from_bytes(buffer[:4], "little") + 4
                if need < _w.HEADER or need > limit:
                    raise _Breach
                if len(buffer) >= need:
                    whole = bytes(buffer)  # (no copy when it is bytes already)
                    started.buffer, started.growing = whole[need:], None
                    ident = int.from_bytes(whole[5:9], "little")
                    return whole[4:5], ident, whole[9 : _w.HEADER], whole[_w.HEADER : need]
            if deadline is not None:
                # select, not poll: macOS's poll refuses some descriptors, Windows has none
                # (its select takes sockets, which this is).
                left = max(0.0, deadline - time.monotonic())
                ready, _writable, _failed = select.select([sock], [], [], left)
                if not ready:
                    if type(buffer) is bytearray:
                        started.buffer, started.growing = b"", buffer
                    else:
                        started.buffer = bytes(buffer)
                    return None
            chunk = sock.recv(max(1 << 16, need - len(buffer)))
            if not chunk:
                raise EOFError
            if not buffer:
                buffer = chunk
            elif type(buffer) is bytearray:
                buffer += chunk
            else:
                buffer = bytearray(buffer) + chunk

    def _stop(self, pending: _Pending, why: str) -> None:
        """A call's timeout or cancellation: kill its worker (the function stops with it)."""

        with self._lock:
            if pending.done:
                return
            pending.stopped_by = why
        self._stop_started(pending.started)
        self._died(pending.started, "")

    @staticmethod
    def _stop_started(started: Started) -> None:
        started.kill()
        with contextlib.suppress(OSError):
            started.sock.shutdown(2)

    def _died(self, started: Started, reason: str, *, finished: bool = False) -> None:
        """``started`` ended: fail its calls in flight at once (never re-sent)."""

        with self._lock:
            if self._started is not started:
                return
            self._started = None
            failed = [p for p in self._pending.values() if p.started is started]
            self._pending = {k: p for k, p in self._pending.items() if p.started is not started}
        status = started.process.returncode if finished else started.finish()
        stopper = next((p.stopped_by for p in failed if p.stopped_by), "")
        for pending in failed:
            if pending.stopped_by == "timeout":
                pending.error = CallTimeoutError("the call timed out: the worker was killed")
            elif pending.stopped_by == "cancel":
                pending.error = CallCancelledError("the call was cancelled", status=status)
            elif stopper:
                pending.error = CallCancelledError(
                    f"another call on the same worker was stopped ({stopper}), which killed it",
                    status=status,
                )
            else:
                pending.error = WorkerDiedError(_death_message(status, reason), status=status)
            with self._lock:
                pending.done = True
            if pending.callback is not None:
                pending.callback(pending)
        with self._cv:
            self._cv.notify_all()

    def _outcome(
        self,
        pending: _Pending,
        function: Callable[..., Any],
        allowed: tuple[frozenset[tuple[str, str]], bool] | None = None,
    ) -> Any:
        if pending.error is not None:
            error = pending.error
            if isinstance(error, WorkerDiedError | CallTimeoutError):
                error.args = (f"{_name(function)}: {error.args[0]}",)
            raise error
        if pending.kind == _w.RESULT:
            names, anything = allowed if allowed is not None else (self.allowed, self.anything)
            return results.loads_result(pending.body, names, anything, self.max_result)
        # Decoded with no global allowed and checked as plain data, every reference counted
        # (never marshal, which is not meant for bytes from an untrusted writer).
        from pysandboxes.partial.decode import decode_record

        record = decode_record(pending.body)
        if type(record) is not dict:
            raise UnsafeResultError(f"{_name(function)}: an unreadable error record")
        raise results.rebuild_error(record, _name(function))


def _drain(pending: _Pending) -> None:
    """Show what the call's worker printed before its answer (``partial.output``)."""

    relay = pending.started.relay
    if relay is not None:
        relay.drain()


#: Frame kinds that answer a call.
_ANSWERS = (_w.RESULT, _w.ERROR)


class _Breach(Exception):
    """The worker sent a frame the protocol does not allow (too large)."""


def _status_text(status: int | None) -> str:
    if status is None:
        return "the sandboxed worker ended"
    if status < 0:
        import signal

        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"the sandboxed worker was killed by {name}"
    return f"the sandboxed worker exited with status {status}"


def _death_message(status: int | None, reason: str) -> str:
    how = _status_text(status)
    if reason:
        how += f" ({reason})"
    return how + " during the call; the call is not sent again"


def _name(function: Any) -> str:
    return str(getattr(function, "__qualname__", None) or getattr(function, "__name__", function))


def _check_timeout(timeout: float | None) -> None:
    if timeout is not None and (not isinstance(timeout, int | float) or timeout <= 0):
        raise PartialModeError(f"timeout= must be a positive number of seconds: {timeout!r}")


def _caller_path0() -> str:
    import sys

    first = sys.path[0] if sys.path else ""
    return os.path.abspath(first) if first else ""


__all__ = ["SandBoxError", "Worker"]
