"""The eval worker's protocol: one round trip per evaluation, host functions called back.

Both ends of a warm worker (``evalguard/worker.py``) speak it over a pair of file descriptors
(the forked worker's pipes, or the partial-mode worker's socket once :func:`serve_spawned`
took it over). Frames::

    LEN (4 bytes, little endian: the size of what follows) | KIND (1 byte) | BODY

Host to worker:

- ``E`` evaluate: a pickle of ``(profile, source, mode, names)`` naming no global (plain
  values only); ``F`` the same when ``names`` holds more: a host function is then a
  *reference* (a persistent id), never the function;
- ``r`` / ``x``: the answer to a host call (its result, pickled the same way; or its
  exception as an error record).

Worker to host: ``K`` once, ready; then for an evaluation, any number of ``H`` (call host
function N with these arguments: a pickle of ``(N, args, kwargs)``), then ``R`` (a pickle of
``(printed text, value)``) or ``X`` (``(printed text, error record)``, plain data).

What the host decodes comes from evaluated code: :class:`ResultUnpickler` resolves only the
data types of partial mode (``partial.results.DATA_GLOBALS``) and *classes* -- never
functions -- of the modules the profile may import (a sympy expression), the compile of
source text by such a class refused while it decodes (``runtime.install_string_hook``);
error records name no global at all. What the worker decodes comes from the host (trusted):
its globals are resolved without the ``pickle.find_class`` audit event, which the guard
would judge as the program's deserialization.
"""

from __future__ import annotations

import io
import os
import pickle
import select
import sys
import time

from pysandboxes import errors
from pysandboxes.partial.errors import UnsafeResultError
from pysandboxes.partial.results import DATA_GLOBALS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from pysandboxes.evalguard.rules import EvalRules

EVALUATE, EVALUATE_REFS, HOST_RESULT, HOST_ERROR = b"E", b"F", b"r", b"x"
READY, HOST_CALL, RESULT, ERROR = b"K", b"H", b"R", b"X"
PROTOCOL = 5
#: Largest frame either side accepts.
MAX_FRAME = 1 << 30
#: Largest value (every reference counted) or error record decoded from an evaluation.
RESULT_BYTES = 64 << 20
_select = select.select
_monotonic = time.monotonic
_read = os.read
if sys.platform == "win32":  # no sched_yield: a zero sleep gives the CPU away there

    def _yield() -> None:
        time.sleep(0)
else:
    _yield = os.sched_yield
#: Seconds the host polls for an answer (at most; only for a source whose last evaluation
#: answered within half of it), and the worker for the next request, before sleeping (see
#: :meth:`Reader.read`). Longer polls were measured slower on a loaded 2-core machine: the
#: polling side kept a CPU the other side's evaluation needed.
SPIN_HOST = 0.0002
SPIN_WORKER = 0.0002
#: Values that pickle with no global and hold no function: the fast path of ``names``.
_PLAIN = frozenset({int, float, str, bool, bytes, type(None), complex})


def frame(kind: bytes, body: bytes) -> bytes:
    return (len(body) + 1).to_bytes(4, "little") + kind + body


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Reader:
    """Frames from one descriptor; ``deadline`` (monotonic) or ``None`` to wait for ever.

    The deadline is one instant for the whole frame, not a time per read: a peer that
    trickles its frame byte by byte gets no more time than one that sends nothing. The
    chunks of a frame are joined once it is complete (joining each one as it came would copy
    a large frame once per chunk), and a frame longer than ``max_frame`` is refused before
    any of it is kept (the host sets it from the rules: what a worker may answer)."""

    __slots__ = ("buffer", "fd", "max_frame")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""
        self.max_frame = MAX_FRAME

    def read(self, deadline: float | None = None, spin: float = 0.0) -> tuple[bytes, bytes] | None:
        """The next frame, ``None`` past ``deadline``; ``EOFError`` when the other end closed
        (or sent a malformed or oversized frame).

        ``spin``: seconds to poll for the frame before sleeping in ``select``. Waking a
        sleeping process costs tens of microseconds on a virtual machine (an idle virtual CPU
        is halted), most of a short evaluation's round trip; a frame that comes while this
        side polls costs none. Each poll yields the CPU to any other process that wants it
        (``sched_yield``), so a busy machine loses nothing but the polls themselves."""

        buffer = self.buffer
        fd = self.fd
        pending: list[bytes] = []  # chunks after ``buffer``, joined when the frame is whole
        have = len(buffer)
        want = 5
        while True:
            if pending and (have >= want or len(buffer) < 5):
                buffer = b"".join((buffer, *pending))
                pending = []
            if len(buffer) >= 5:
                size = int.from_bytes(buffer[:4], "little") + 4
                if size < 5 or size > self.max_frame + 4:
                    raise EOFError("a frame of the eval worker's protocol is malformed")
                if len(buffer) >= size:
                    self.buffer = buffer[size:]
                    return buffer[4:5], buffer[5:size]
                want = size
            if spin:
                until = _monotonic() + spin
                spin = 0.0
                while not _select((fd,), (), (), 0)[0]:
                    if _monotonic() > until:
                        break
                    _yield()
            if deadline is not None:
                left = deadline - _monotonic()
                if left <= 0 or not _select((fd,), (), (), left)[0]:
                    self.buffer = b"".join((buffer, *pending)) if pending else buffer
                    return None
            try:
                chunk = _read(fd, 1 << 16)
            except ConnectionResetError:  # a socket whose peer died with a request unread
                chunk = b""
            if not chunk:
                raise EOFError("the other end of the eval worker's channel closed")
            if buffer or pending:
                pending.append(chunk)
            else:
                buffer = chunk
            have += len(chunk)


# -- the host's side ------------------------------------------------------------------------------


class _HostPickler(pickle.Pickler):
    """Pickles ``names`` or a host function's result: a function that is not a granted
    module's own (those cross by reference: the worker has the module) becomes a persistent id
    ``("h", index in the host's table, name)``, which the worker turns into a
    :class:`HostProxy`; a module crosses as ``("m", name)``."""

    def __init__(self, file: Any, table: list[Any], tops: frozenset[str]) -> None:
        super().__init__(file, PROTOCOL)
        self.table = table
        self.tops = tops

    def persistent_id(self, obj: Any) -> Any:
        kind = type(obj)
        if kind in _PLAIN or kind is list or kind is dict or kind is tuple:
            return None
        if kind is type(sys):
            return ("m", obj.__name__)
        if callable(obj) and not isinstance(obj, type):
            module = getattr(obj, "__module__", None)
            if type(module) is str and module.partition(".")[0] in self.tops:
                return None  # a granted module's function: by reference
            self.table.append(obj)
            return ("h", len(self.table) - 1, str(getattr(obj, "__name__", "function")))
        return None


def dumps_for_worker(value: Any, table: list[Any], tops: frozenset[str]) -> bytes:
    """``value`` for the worker (host functions as references into ``table``)."""

    buffer = io.BytesIO()
    try:
        _HostPickler(buffer, table, tops).dump(value)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise TypeError(
            f"a value cannot cross to the evaluation's worker: {exc} (pass data, functions, "
            "or objects of the modules the profile may import; or backend='in-process')"
        ) from None
    return buffer.getvalue()


def plain_names(names: dict[str, Any]) -> bool:
    """Whether every value is a plain scalar (pickled with no global and no function)."""

    for value in names.values():  # noqa: SIM110 (a loop: no generator per call, hot path)
        if type(value) not in _PLAIN:
            return False
    return True


class _Resolving:
    """``find_class`` of :class:`ResultUnpickler` (C) and its pure-Python twin."""

    tops: frozenset[str]

    def __init__(self, file: Any, tops: frozenset[str]) -> None:
        super().__init__(file)  # type: ignore[call-arg]
        self.tops = tops

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in DATA_GLOBALS:
            # partial mode's checked builders (issue 25): no data type computes with the
            # worker's arguments (bytearray(N), Fraction('1e999999999'), nested deques)
            from pysandboxes.partial.decode import builder_for

            return builder_for(module, name)
        if module.partition(".")[0] in self.tops and not any(
            part.startswith("_") for part in (*name.split("."), *module.split("."))
        ):
            target = sys.modules.get(module)  # never imported on the worker's word
            for part in name.split("."):
                target = getattr(target, part, None)
                if type(target) is type(sys):
                    break  # never through a module a granted one imported (gtk.subprocess)
            if (
                isinstance(target, type)
                # the class's own name only: sympy.printing.gtk imports subprocess, and
                # ('sympy.printing.gtk', 'subprocess.Popen') would otherwise be a class
                # "of sympy" that runs a command when the host builds it
                and target.__module__ == module
                and target.__qualname__ == name
                and not issubclass(target, BaseException)
                and not issubclass(target, type)  # a metaclass would make classes here
            ):
                return target
        raise pickle.UnpicklingError(
            f"a {module}.{name} cannot cross back from a guarded evaluation: only data and "
            "classes (no function) of the modules its profile may import do (return data, or "
            "use backend='in-process')"
        )

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("a guarded evaluation's result cannot name a host object")


class _NamesAGlobal(Exception):
    """Raised by :class:`_PlainUnpickler` at the first global or persistent id."""


class _PlainUnpickler(pickle.Unpickler):
    """The C unpickler for a small answer with no ``PUT``/``LONG_BINPUT`` (which would size
    its memo to their index): it stops at the first opcode that names a global (``GLOBAL``,
    ``INST``, ``STACK_GLOBAL``, the ``EXT`` codes) or a persistent id, before anything is
    built from a class; what it returns is plain values, as ``pickle.loads`` of a pickle with
    no such opcode returns."""

    def find_class(self, module: str, name: str) -> Any:
        raise _NamesAGlobal

    def persistent_load(self, pid: Any) -> Any:
        raise _NamesAGlobal


class ResultUnpickler(_Resolving, pickle.Unpickler):
    """Decodes what evaluated code sends (see the module docstring)."""


class _PyResultUnpickler(_Resolving, pickle._Unpickler):  # type: ignore[name-defined,misc]
    """:class:`ResultUnpickler` whose memo is a dict (a ``PUT`` index sizes no memory)."""


def loads_from_worker(data: bytes, rules: EvalRules) -> Any:
    """Decode a result or a host call's arguments from the worker (``EvalWorkerError`` when
    it names something that may not cross)."""

    from pysandboxes.partial import decode

    limits = decode.Limits(RESULT_BYTES)
    if len(data) < 4096 and b"p" not in data and b"r" not in data:
        # Plain values only (counted: shared references expand), unless an opcode names a
        # global or a persistent id: then the decoder below reads it. Asked of the opcodes
        # themselves, not of the bytes: a name such as "i" in the data is no INST.
        try:
            value = _PlainUnpickler(io.BytesIO(data)).load()
        except Exception:  # a global, a persistent id, or no pickle: the decoder below says
            pass
        else:
            try:
                return decode.finish(value, limits)
            except UnsafeResultError as exc:
                raise errors.EvalWorkerError(str(exc)) from None
    from pysandboxes.evalguard import engine, runtime

    tops = engine.runtime_for(rules).module_tops
    runtime.install_string_hook()
    state = runtime.State(rules)
    previous = runtime.set_current(state)  # a class that compiles a string: refused
    try:
        # PUT/LONG_BINPUT would size C's memo to their index: the pure-Python unpickler then
        kind = _PyResultUnpickler if (b"p" in data or b"r" in data) else ResultUnpickler
        with _unevaluated(tops):
            return decode.finish(kind(io.BytesIO(data), tops).load(), limits)
    except runtime.Stop:
        raise errors.EvalWorkerError(
            "decoding the result of a guarded evaluation compiled source text: refused"
        ) from None
    except (
        pickle.UnpicklingError,
        EOFError,
        ValueError,
        TypeError,
        AttributeError,
        UnsafeResultError,
        RecursionError,
    ) as exc:
        raise errors.EvalWorkerError(str(exc)) from None
    finally:
        state.finished = True
        runtime.set_current(previous)


class _unevaluated:
    """While a result is decoded: sympy builds what crosses back unevaluated.

    A sympy object is rebuilt by its class's constructor with the arguments it had in the
    worker, and sympy's constructors compute: ``Pow(10, 10**10, evaluate=False)`` made in the
    worker would be *evaluated* by the host while it decodes the result (minutes of CPU and
    gigabytes, in the host, where nothing can interrupt it). Its ``global_parameters`` are
    per thread, so turning evaluation off here changes nothing for the host's other
    threads; the object comes back as it was in the worker."""

    __slots__ = ("previous", "target")

    def __init__(self, tops: frozenset[str]) -> None:
        self.target: Any = None
        self.previous = True
        if "sympy" in tops:
            parameters = sys.modules.get("sympy.core.parameters")
            self.target = getattr(parameters, "global_parameters", None)

    def __enter__(self) -> None:
        if self.target is not None:
            self.previous = self.target.evaluate
            self.target.evaluate = False

    def __exit__(self, *exc: object) -> None:
        if self.target is not None:
            self.target.evaluate = self.previous


def loads_plain(data: bytes) -> Any:
    """An error record: plain data, naming no global, node-bounded (``partial.decode``)."""

    from pysandboxes.partial import decode

    try:
        return decode.decode_plain(data, decode.Limits(RESULT_BYTES, nodes=decode.RECORD_NODES))
    except UnsafeResultError as exc:
        raise pickle.UnpicklingError(str(exc)) from None


def error_record(exc: BaseException) -> dict[str, Any]:
    from pysandboxes.partial.worker import error_record as record

    return record(exc)


def rebuild(record: Any, what: str) -> BaseException:
    from pysandboxes.partial.results import rebuild_error

    if type(record) is not dict:
        return errors.EvalWorkerError("the evaluation's worker sent an unreadable error")
    return rebuild_error(record, what)


def host_call(
    body: bytes, table: list[Any], rules: EvalRules, tops: frozenset[str]
) -> tuple[bytes, BaseException | None]:
    """Run a host function the worker asked for, in the host; the answer frame, and the
    exception the function raised (it is re-raised as itself if the evaluation ends in it)."""

    from pysandboxes.evalguard import engine, runtime

    try:
        index, args, kwargs = loads_from_worker(body, rules)
        function = table[index]
        result = function(*args, **kwargs)
        # What a host function returns crosses as its arguments did: checked here as the
        # in-process guard checks it, so that only data, functions and granted objects go.
        runtime.copy_in(result, engine.runtime_for(rules), True, "the result of a host function")
        return frame(HOST_RESULT, dumps_for_worker(result, table, tops)), None
    except Exception as exc:
        return frame(HOST_ERROR, pickle.dumps(error_record(exc), PROTOCOL)), exc


# -- the worker's side ----------------------------------------------------------------------------


class _TrustedLoader(pickle.Unpickler):
    """Decodes the host's frames (trusted bytes), host functions as :class:`HostProxy`."""

    def __init__(self, file: Any, server: Server) -> None:
        super().__init__(file)
        self.server = server

    def find_class(self, module: str, name: str) -> Any:
        target: Any = sys.modules.get(module)
        if target is None:
            __import__(module)
            target = sys.modules[module]
        for part in name.split("."):
            target = getattr(target, part)
        return target

    def persistent_load(self, pid: Any) -> Any:
        if pid[0] == "m":
            module = sys.modules.get(pid[1])
            if module is None:
                __import__(pid[1])
                module = sys.modules[pid[1]]
            return module
        return HostProxy(self.server, pid[1], pid[2])


class CappedOutput(io.StringIO):
    """The worker's stdout during an evaluation: every write counts against
    ``eval-max-output`` (a library printing in a loop, not only ``print``); past it the
    evaluation is interrupted (the guard's own error, never swallowed)."""

    def __init__(self, rules: EvalRules) -> None:
        super().__init__()
        self.rules = rules
        self.size = 0

    def write(self, text: str) -> int:
        from pysandboxes.evalguard import runtime

        state = runtime.current_or_none()
        if state is not None and state.error is not None:
            raise runtime.Stop()  # tripped (a library swallowed it): nothing more is written
        self.size += len(text)
        if self.size > self.rules.max_output:
            error = errors.EvalOutputError(
                f"guarded evaluation printed more than {self.rules.max_output} characters "
                f"({self.rules.key('eval-max-output')})"
            )
            raise error if state is None else state.trip(error)
        return super().write(text)


class HostProxy:
    """A host function, in the worker: calling it asks the host to run it (the evaluation
    waits; its clock keeps running) and returns its result, or raises its exception."""

    __slots__ = ("index", "name", "server")

    def __init__(self, server: Server, index: int, name: str) -> None:
        self.server = server
        self.index = index
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from pysandboxes.evalguard import runtime

        state = runtime.current_or_none()
        if state is not None and state.error is not None:
            raise runtime.Stop()  # tripped (a library swallowed it): the host is not asked
        for value in (*args, *kwargs.values()):
            runtime.copy_out(value)  # the source's functions and the guard's objects stay
        try:
            body = pickle.dumps((self.index, args, kwargs), PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise TypeError(
                f"an argument of {self.name}() cannot cross to the host: {exc}"
            ) from None
        return self.server.ask_host(body, self.name)

    def __repr__(self) -> str:
        return f"<host function {self.name}>"


class Server:
    """The worker's loop: one evaluation at a time, in this process (the guard's in-process
    run), bounded by the resource limits set before each one (``limits(rules)``)."""

    def __init__(self, read_fd: int, write_fd: int, limits: Callable[[EvalRules], None]) -> None:
        self.reader = Reader(read_fd)
        self.write_fd = write_fd
        self.limits = limits

    def serve(self) -> None:
        """Answer evaluations until the host closes the channel."""

        write_all(self.write_fd, frame(READY, b""))
        while True:
            try:
                got = self.reader.read(None, SPIN_WORKER)
            except EOFError:
                return
            if got is None or got[0] not in (EVALUATE, EVALUATE_REFS):
                return
            write_all(self.write_fd, self.evaluate(got[1], got[0] == EVALUATE))

    def evaluate(self, body: bytes, plain: bool = True) -> bytes:
        """One evaluation: ``body`` is an ``E`` frame's (``plain``: it names no global and no
        host function, so the C unpickler decodes it with no find_class at all)."""

        from pysandboxes.evalguard.api import IN_PROCESS, resolve

        out: io.StringIO | None = None
        saved = sys.stdout
        try:
            if plain:
                profile, source, mode, names = pickle.loads(body)
            else:
                profile, source, mode, names = _TrustedLoader(io.BytesIO(body), self).load()
            rules = resolve(profile, None)
            self.limits(rules)
            # print's text crosses back with the answer; so does what a library writes to
            # stdout, counted against eval-max-output too (it is the worker's stdout, not
            # the host's terminal)
            out = sys.stdout = CappedOutput(rules)
            try:
                value = IN_PROCESS.run(source, mode, names, rules)
            finally:
                sys.stdout = saved
            try:
                body = pickle.dumps((out.getvalue(), value), PROTOCOL)
            except (pickle.PicklingError, TypeError, AttributeError) as exc:
                raise TypeError(
                    f"the result of a guarded evaluation cannot cross back to the host: {exc}"
                ) from None
            if len(body) > rules.max_alloc + rules.max_output:
                # the host would hold it all (decoded, more): refused here, where it is
                raise errors.EvalMemoryError(
                    f"the result of a guarded evaluation is {len(body)} bytes once encoded, "
                    f"more than {rules.key('eval-max-alloc')} ({rules.max_alloc})"
                )
            return frame(RESULT, body)
        except MemoryError as exc:
            retire = not isinstance(exc, errors.EvalMemoryError)  # the kernel's limit was hit
            if retire:
                exc = errors.EvalMemoryError(
                    "guarded evaluation ran out of its worker's memory limit (twice "
                    "eval-max-alloc over the worker's size)"
                )
            return self._error(out, exc, retire)
        except BaseException as exc:
            return self._error(out, exc, False)

    @staticmethod
    def _error(out: io.StringIO | None, exc: BaseException, retire: bool) -> bytes:
        """An ``X`` frame: what was printed, the error as plain data, whether the worker
        should be replaced (it hit its memory limit: its state may be damaged)."""

        record = error_record(exc)
        try:
            text = out.getvalue() if out is not None else ""
            body = pickle.dumps((text, record, retire), PROTOCOL)
        except Exception:  # a str subclass in the record, say
            body = pickle.dumps(("", {"module": "builtins", "qualname": "RuntimeError"}, retire))
        return frame(ERROR, body)

    def ask_host(self, body: bytes, name: str) -> Any:
        write_all(self.write_fd, frame(HOST_CALL, body))
        got = self.reader.read()
        if got is None:  # pragma: no cover - no deadline here
            raise EOFError
        kind, answer = got
        if kind == HOST_RESULT:
            return _TrustedLoader(io.BytesIO(answer), self).load()
        raise rebuild(loads_plain(answer), name)
