"""Partial mode's worker: the call loop that runs inside the sandboxed interpreter.

``launch/child.py`` starts it for the program kinds ``worker`` and ``eval-worker`` (see
``pysandboxes.partial``): the bootstrap imports this module by name (``child.EXTENSIONS``)
and calls :func:`prepare` *before* the Python layer is armed, and
:meth:`Server.start_threads` last before arming (after learning's seccomp hand-over, which the
threads must inherit) -- every module the loop needs is loaded and every thread it uses is
started then, since after arming the rules judge thread starts and imports -- then arms the
guard and calls :meth:`Server.serve`.

Transport: one inherited ``AF_UNIX`` socketpair end, descriptor ``fields["worker_fd"]``, carrying
length-prefixed frames (:func:`encode_frame`)::

    LEN (4 bytes, little endian: the size of what follows) | KIND (1 byte) | ID (4 bytes)
        | TOKEN (8 bytes) | BODY

``TOKEN`` is a per-call secret the parent draws for each ``C`` frame; the worker's answer for
that call carries it back, and the parent takes an answer only with its call's token (issue 25):
a function cannot answer a concurrent call of the same worker by guessing its ``ID``. (A
function that searches the worker's own memory can still find it: only ``fresh=True`` or
``threads=1`` keep calls apart.)

Parent to worker:

- ``D`` define function ``ID``: BODY is a pickle of the function, shipped by value (see
  ``pysandboxes.partial.shipping``); decoded with :class:`_Loader`, whose ``find_class``
  imports modules as the *program* (judged by ``python-import``) and never raises the
  ``pickle.find_class`` event (the bytes come from the trusted parent);
- ``C`` call ``ID``: BODY is a pickle of ``(function id, args, kwargs)``.

Worker to parent: ``K`` once, when the guard is armed and the threads wait (the parent's
start-up waits for it); then, for call ``ID``:

- ``R`` the result, pickled (protocol 5) and no larger than the size limit (checked here,
  at the sender);
- ``E`` the exception, as plain data (a pickle of dicts, lists, str, int, float, bool, bytes
  and None that names no global: see :func:`error_record`); the parent decodes it with an
  unpickler that resolves no global at all, and rebuilds the exception.

Sync functions run in a pool of threads started before arming; coroutine functions run on an
event loop in its own thread. How the threads share the socket (:meth:`Server.start_threads`
picks one):

- **Linux, more than one thread** (:meth:`Server._wait_and_read`): every idle thread waits in
  ``epoll_wait`` on one epoll instance, the socket registered edge-triggered. The kernel wakes
  *one* waiter per arriving frame, which reads it (without blocking: ``MSG_DONTWAIT``) and runs
  the call itself. A sequential caller costs no thread hand-off at all: nobody is woken but the
  thread that runs the call. A call that waits for a concurrent call does not hold up the
  read: the next frame wakes another idle thread. When one read brings more than one frame, the
  thread that took the first wakes another through an ``eventfd`` in the same epoll instance.
- **Elsewhere, with ``threads=1``, and under ``PYSANDBOXES_PORTABLE``**
  (:meth:`Server._take_turns`): the threads take turns reading the socket (a
  "leader/follower" loop: the reader hands the read lock on and then runs the call; with one
  thread there is nobody to hand it to).

The worker's standard output is its standard error (``dup2``): what a function prints never
reaches the parent's standard output, a stdio MCP server's protocol channel.

A function's code is rebuilt here with ``marshal`` and ``types.FunctionType`` by this module,
which is python-sb's (library) code, so the guard does not judge those steps as the program's
dynamic code. The parent gave every shipped code object a file name starting with
:data:`PROGRAM_PREFIX`, which is no library directory: once it runs, the guard judges that code
as the program's (imports, dynamic code, introspection), wherever its source file lives.
"""

import _queue  # type: ignore[import-not-found,unused-ignore]
import builtins
import io
import marshal
import os
import pickle
import sys
import threading
import types

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Frame header: 4 bytes of length, 1 byte of kind, 4 bytes of call or function id, 8 bytes
#: of the call's token.
HEADER = 17
#: The token of a frame that answers no call (``D``, ``K``).
NO_TOKEN = bytes(8)
#: Prefix of the file name of every shipped code object (``<sandboxed>/path/to/app.py``).
PROGRAM_PREFIX = "<sandboxed>"
#: Protocol of every pickle on the wire (out-of-band buffers are not used).
PROTOCOL = 5
#: Largest frame the worker accepts from the parent (a define frame may be large).
MAX_INCOMING = 1 << 30

DEFINE, CALL, RESULT, ERROR, READY = b"D", b"C", b"R", b"E", b"K"
#: Threads of the event loop's executor (``getaddrinfo``, ``run_in_executor``).
EXECUTOR_THREADS = 4


def encode_frame(kind: bytes, ident: int, body: bytes, token: bytes = NO_TOKEN) -> bytes:
    """One frame (see the module docstring)."""

    head = (len(body) + HEADER - 4).to_bytes(4, "little") + kind + ident.to_bytes(4, "little")
    return head + token + body


def _read_exact(fd: int, size: int) -> bytes:
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _frame_size(buffer: bytes) -> int:
    """The size of the frame whose header starts ``buffer``; one outside the protocol ends the
    worker (``EOFError``, as the parent's closing would)."""

    size = int.from_bytes(buffer[:4], "little") + 4
    if size < HEADER or size > MAX_INCOMING:
        raise EOFError
    return size


# -- rebuilding shipped functions and classes (parent -> worker) ----------------------------------

#: Namespaces of the modules whose functions were shipped by value, by module name; the
#: parent's ``__main__`` shares this interpreter's ``__main__`` (so that its classes pickle back
#: by reference).
_namespaces: "dict[str, dict[str, Any]]" = {}


def _program_import_code() -> "types.CodeType":
    """The code of the program's import (below), from a function that exists only while this
    runs: a function of this library file that imports the name it is given would let a program
    import as library code, unjudged (review attack r8_import_by_a_python_sb_function)."""

    def program_import(name: str) -> "Any":
        module = __import__(name)
        for part in name.split(".")[1:]:
            module = getattr(module, part)
        return module

    return program_import.__code__


#: The program's import: code whose file name is not a library's, in globals of its own, so
#: that the guard judges the modules a shipped function needs by ``python-import``, as if the
#: function imported them. Rebuilt from a code object rather than compiled from source: a
#: process's first ``compile()`` builds the ``ast`` module's classes (docs/performance.md),
#: which a worker has no other use for.
_import_namespace: "dict[str, Any]" = {"__builtins__": builtins, "__name__": "__sandboxed__"}
_IMPORTER = PROGRAM_PREFIX + "import"
program_import = types.FunctionType(
    _program_import_code().replace(co_filename=_IMPORTER, co_qualname="program_import"),
    _import_namespace,
    "program_import",
)


def namespace_of(module: str) -> "dict[str, Any]":
    """The worker's namespace for the caller's module ``module`` (its functions share it)."""

    found = _namespaces.get(module)
    if found is None:
        if module == "__main__":
            found = sys.modules["__main__"].__dict__
        else:
            found = {"__name__": module, "__builtins__": builtins}
        _namespaces[module] = found
    return found


def make_function(code_bytes: bytes, module: str, name: str, cells: int) -> "types.FunctionType":
    """A function skeleton: its code, its module's namespace, empty closure cells (filled by
    :func:`fill_function` once everything it refers to, itself included, exists)."""

    code = _as_program(marshal.loads(code_bytes))
    closure = tuple(types.CellType() for _ in range(cells)) if cells else None
    return types.FunctionType(code, namespace_of(module), name, None, closure)


def _as_program(code: "types.CodeType") -> "types.CodeType":
    """``code`` with :data:`PROGRAM_PREFIX` before every file name in it (the parent does it
    already; done again here so that no bytes handed to this loader, whoever calls it, make
    code that the guard would count as a library's)."""

    consts = code.co_consts
    if any(type(c) is types.CodeType for c in consts):
        consts = tuple(_as_program(c) if type(c) is types.CodeType else c for c in consts)
    filename = code.co_filename
    if type(filename) is not str or not filename.startswith(PROGRAM_PREFIX):
        filename = PROGRAM_PREFIX + str(filename)
    if filename is code.co_filename and consts is code.co_consts:
        return code
    return code.replace(co_filename=filename, co_consts=consts)


#: Source lines the parent shipped with its functions: file name -> {line number: text}.
_sources: "dict[str, dict[int, str]]" = {}


def fill_function(function: "types.FunctionType", state: "tuple[Any, ...]") -> None:
    items, defaults, kwdefaults, cells, qualname, attributes = state[:6]
    if len(state) > 6 and type(state[6]) is tuple:
        filename, first, lines = state[6]
        known = _sources.setdefault(str(filename), {})
        for offset, text in enumerate(lines):
            known.setdefault(first + offset, str(text))
    # The worker's module namespace keeps what it holds (what init_fn or earlier calls set):
    # a name gets the caller's value only the first time a function brings it.
    namespace = function.__globals__
    for name, value in items.items():
        namespace.setdefault(name, value)
    function.__defaults__ = defaults
    function.__kwdefaults__ = kwdefaults
    for cell, value in zip(function.__closure__ or (), cells, strict=True):
        if value is not _EMPTY_CELL:
            cell.cell_contents = value
    function.__qualname__ = qualname
    function.__dict__.update(attributes)


class _EmptyCell:
    """Stands for a closure cell that was empty when the function was shipped."""

    def __reduce__(self) -> str:
        return "_EMPTY_CELL"


_EMPTY_CELL = _EmptyCell()


#: Classes shipped by value, by the parent's token (see ``partial.shipping``).
_classes: "dict[int, type]" = {}


def make_class(
    token: int, meta: type, name: str, bases: "tuple[type, ...]", base_dict: "dict[str, Any]"
) -> type:
    """A class shipped by value (defined in ``__main__`` or in a function): its skeleton, made
    with its metaclass; attributes follow in :func:`fill_class`. The same class of the caller
    is the same class here, whichever frame brought it."""

    known = _classes.get(token)
    if known is not None:
        return known
    cls: type = meta(name, bases, base_dict)
    _classes[token] = cls
    module = base_dict.get("__module__")
    if module == "__main__" and "." not in base_dict.get("__qualname__", name):
        namespace_of("__main__").setdefault(name, cls)
    return cls


def fill_class(cls: type, items: "dict[str, Any]") -> None:
    for key, value in items.items():
        setattr(cls, key, value)


def import_module(name: str, submodules: "tuple[str, ...]" = ()) -> "types.ModuleType":
    """``name`` imported as the program imports it, with the ``submodules`` its function reads
    as attributes (``urllib`` and ``request``)."""

    module: types.ModuleType = program_import(name)
    for sub in submodules:
        program_import(f"{name}.{sub}")
    return module


#: What a define frame may name besides the modules the program imports.
_OWN = {
    "make_function": make_function,
    "fill_function": fill_function,
    "make_class": make_class,
    "fill_class": fill_class,
    "import_module": import_module,
    "_EMPTY_CELL": _EMPTY_CELL,
}
_OWN_MODULE = __name__


class _Loader(pickle.Unpickler):
    """Decodes the parent's frames (trusted bytes). Globals are resolved here rather than by
    ``pickle``'s own ``find_class``: this module's rebuilders, the pickle machinery's own modules,
    and every other module imported as the program imports it (judged by the rules)."""

    def find_class(self, module: str, name: str) -> "Any":
        if module == _OWN_MODULE or module == "pysandboxes_worker":
            return _OWN[name]
        if module in ("builtins", "copyreg", "_codecs"):
            target: Any = sys.modules[module]
        elif module == "pysandboxes" or module.startswith("pysandboxes."):
            # python-sb's own code (the eval guard's evaluator, say): imported as the
            # worker's own import, and it runs as library code, as in the caller.
            __import__(module)
            target = sys.modules[module]
        else:
            target = program_import(module)
        for part in name.split("."):
            target = getattr(target, part)
        return target


def _loads(data: bytes) -> "Any":
    if b"\x93" not in data:  # no STACK_GLOBAL (protocol 5 has no other global opcode here)
        return pickle.loads(data)  # names nothing: the fast C path, no find_class at all
    return _Loader(io.BytesIO(data)).load()


# -- errors (worker -> parent) ---------------------------------------------------------------------

#: Types an error record's ``args`` may hold; anything else is sent as its ``repr``.
_PLAIN = (str, int, float, bool, bytes, type(None))


def _plain(value: "Any", depth: int = 0) -> bool:
    kind = type(value)
    if kind in _PLAIN:
        return True
    if depth > 8:
        return False
    if kind in (list, tuple):
        return all(_plain(v, depth + 1) for v in value)
    if kind is dict:
        return all(type(k) is str and _plain(v, depth + 1) for k, v in value.items())
    return False


_OWN_FILES = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,)


def _frames(tb: "Any") -> "list[list[Any]]":
    """(file, line, function, source line) of each frame of ``tb`` outside python-sb's own
    code; shipped code keeps its parent-side file name and the source line the parent shipped
    with it (else one ``linecache`` holds already: no file is read here). The parent formats
    only this text, bounded (it never reads a file a frame names)."""

    found = []
    while tb is not None:
        try:
            code = tb.tb_frame.f_code
            filename, line, name = code.co_filename, tb.tb_lineno, code.co_name
        except Exception:  # the guard does not hand out its own frames
            break
        if type(filename) is str and not filename.startswith(_OWN_FILES) and filename != _IMPORTER:
            if filename.startswith(PROGRAM_PREFIX):
                filename = filename[len(PROGRAM_PREFIX) :]
            text = _sources.get(filename, {}).get(line, "") if type(line) is int else ""
            if not text:
                cached = sys.modules.get("linecache")
                entry = cached.cache.get(filename) if cached is not None else None
                if entry and type(line) is int and 0 < line <= len(entry[2]):
                    text = entry[2][line - 1]
            found.append([filename, line, name, str(text).strip()[:1000]])
        tb = tb.tb_next
    return found


def error_record(exc: BaseException) -> "dict[str, Any]":
    """``exc`` as plain data: class, message, arguments when plain, OS error fields, the
    refusals of its chain (``sandbox_denials``) and the frames of the sandboxed traceback."""

    cls = type(exc)
    args = list(exc.args) if _plain(list(exc.args)) else [repr(a) for a in exc.args]
    record: dict[str, Any] = {
        "module": str(cls.__module__),
        "qualname": str(cls.__qualname__),
        "message": _safe_str(exc),
        "args": args,
        "frames": _frames(exc.__traceback__),
        "denials": [],
        "chain": [],
    }
    if isinstance(exc, OSError):
        record["errno"] = exc.errno if type(exc.errno) is int else None
        record["strerror"] = exc.strerror if type(exc.strerror) is str else None
        record["filename"] = exc.filename if type(exc.filename) is str else None
    errors = sys.modules.get("pysandboxes.errors")
    if errors is not None:
        for denial in errors.sandbox_denials(exc):
            fields = denial.to_dict()
            record["denials"].append({k: v for k, v in fields.items() if _plain(v)})
    seen = {id(exc)}
    link = exc.__cause__ or exc.__context__
    while link is not None and id(link) not in seen and len(record["chain"]) < 8:
        seen.add(id(link))
        kind = type(link)
        record["chain"].append([f"{kind.__module__}.{kind.__qualname__}", _safe_str(link)])
        link = link.__cause__ or link.__context__
    return record


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__}: unprintable>"


# -- the server ------------------------------------------------------------------------------------


class Server:
    """The call loop (see the module docstring): threads, a loop, one socket."""

    def __init__(self, fd: int, threads: int, max_result: int) -> None:
        self.fd = fd
        self.max_result = max_result
        self.functions: dict[int, Any] = {}
        self.buffer = b""
        self.read_lock = threading.Lock()
        self.write_lock = threading.Lock()
        self.stopped = threading.Event()
        self.loop: Any = None
        self.threads: list[threading.Thread] = []
        self.thread_count = max(1, threads)
        self.go = threading.Event()
        self.loop_wanted = threading.Event()
        self.loop_ready = threading.Event()
        self.loop_error: BaseException | None = None
        self.executor_queue: Any = _queue.SimpleQueue()
        #: The epoll loop's parts (Linux, more than one thread; see :meth:`_epoll_parts`).
        self.epoll: Any = None
        self.sock: Any = None
        self.dontwait = 0
        self.wake_other: Any = None

    def _epoll_parts(self) -> bool:
        """Make the epoll loop's parts (before arming): an epoll instance holding the socket
        (edge-triggered: one event per arrival, whatever is still unread) and an ``eventfd``
        (one event per write: the explicit wake of :meth:`_wait_and_read`), and a socket object
        on the descriptor for ``recv(MSG_DONTWAIT)`` (the descriptor itself stays blocking, for
        the writes and for :func:`take_channel`). ``False`` where any part is missing: a
        descriptor that is not a socket, an old kernel; the turn-taking loop serves then, as
        it does under the portable profiles (``PYSANDBOXES_PORTABLE``, which the bootstrap
        adopted before this: the tests' way to run that loop here)."""

        from pysandboxes import platform_caps

        if sys.platform != "linux":
            return False
        if self.thread_count < 2 or not platform_caps.CAPS.linux:
            return False
        import _socket  # here: 0.4 ms of start-up that a worker of one thread never pays
        import select

        try:
            sock = _socket.socket(fileno=self.fd)
            wake_fd = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
        except (OSError, AttributeError):
            return False
        try:
            epoll = select.epoll()
            epoll.register(self.fd, select.EPOLLIN | select.EPOLLET)
            epoll.register(wake_fd, select.EPOLLIN | select.EPOLLET)
        except OSError:
            sock.detach()
            os.close(wake_fd)
            return False
        self.sock, self.epoll, self.dontwait = sock, epoll, _socket.MSG_DONTWAIT
        self.wake_other = lambda: os.eventfd_write(wake_fd, 1)
        return True

    def start_threads(self) -> None:
        """Start every thread now, before the guard is armed (it judges thread starts): the
        readers, a parked thread for the event loop and parked threads for the loop's executor.
        ``asyncio`` itself is imported only when the first coroutine function is called (a
        library import of python-sb's, which the rules do not judge): a worker of sync
        functions never pays for it."""

        for _ in range(EXECUTOR_THREADS):
            threading.Thread(
                target=self._executor_thread, name="pysb-executor", daemon=True
            ).start()
        threading.Thread(target=self._loop_thread, name="pysb-loop", daemon=True).start()
        reader = self._wait_and_read if self._epoll_parts() else self._take_turns
        for index in range(self.thread_count):
            thread = threading.Thread(target=reader, name=f"pysb-{index}", daemon=True)
            thread.start()
            self.threads.append(thread)

    def _executor_thread(self) -> None:
        while True:
            future, function, args, kwargs = self.executor_queue.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = function(*args, **kwargs)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)

    def _loop_thread(self) -> None:
        self.loop_wanted.wait()
        try:
            import asyncio
            import concurrent.futures

            queue = self.executor_queue

            class ParkedExecutor(concurrent.futures.ThreadPoolExecutor):
                """The loop's executor (``getaddrinfo``, ``run_in_executor``): threads that
                were started before the guard was armed (asyncio wants this class; none of
                its own threads is ever started)."""

                def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
                    return None

                def submit(self, fn: "Any", /, *args: "Any", **kwargs: "Any") -> "Any":
                    future: Any = concurrent.futures.Future()
                    queue.put((future, fn, args, kwargs))
                    return future

            loop = asyncio.new_event_loop()
            loop.set_default_executor(ParkedExecutor())
            asyncio.set_event_loop(loop)
            self.loop = loop
        except BaseException as exc:
            self.loop_error = exc
        finally:
            self.loop_ready.set()
        if self.loop is not None:
            self.loop.run_forever()

    def _event_loop(self) -> "Any":
        self.loop_wanted.set()
        self.loop_ready.wait()
        if self.loop is None:
            raise RuntimeError(
                f"python-sb: the worker's event loop could not start: {self.loop_error!r}"
            )
        return self.loop

    def serve(self) -> None:
        """Let the threads read and run calls; return when the parent closes the socket."""

        self._write(encode_frame(READY, 0, b""))  # armed, threads waiting: calls may come
        self.go.set()
        self.stopped.wait()

    def _take_turns(self) -> None:
        self.go.wait()
        while not self.stopped.is_set():
            with self.read_lock:
                if self.stopped.is_set():
                    return
                try:
                    kind, ident, token, body = self._next_frame()
                except (EOFError, OSError):
                    self.stopped.set()
                    return
                if kind == DEFINE:
                    self._define(ident, body)
                    continue
                if kind != CALL:
                    self.stopped.set()
                    return
            self._call(ident, token, body)  # the read lock is another thread's turn now

    def _wait_and_read(self) -> None:
        """The epoll loop (see the module docstring): wait for an event, take the read lock,
        read what the socket holds, take one call (defines on the way are run here), run it
        with the lock released.

        Why no frame waits unseen: whoever holds the read lock first empties the socket (until
        a short read or ``EAGAIN``), so a byte still unread when the lock is released arrived
        after that, and its arrival made an event that some thread takes (an idle one at
        once, else the next that waits). A complete frame left in the buffer has no event of
        its own: the thread that leaves it writes to the ``eventfd``, which wakes one more
        (who leaves the next one the same way). A thread woken for bytes another thread has
        read already finds nothing and waits again."""

        self.go.wait()
        wait = self.epoll.poll
        while not self.stopped.is_set():
            try:
                wait(-1, 1)
            except OSError:  # (not expected: the epoll instance is never closed)
                self.stopped.set()
                return
            with self.read_lock:
                try:
                    self._read_available()
                    while True:
                        frame = self._take_frame()
                        if frame is None and self.buffer:
                            frame = self._next_frame()  # the rest is on its way: wait for it
                        if frame is None or frame[0] != DEFINE:
                            break
                        self._define(frame[1], frame[3])
                except (EOFError, OSError):
                    self.stopped.set()
                    return
                if frame is None:
                    continue
                if frame[0] != CALL:
                    self.stopped.set()
                    return
                if self._whole_frame_buffered():
                    self.wake_other()  # that frame is another thread's
            self._call(frame[1], frame[2], frame[3])

    def _read_available(self) -> None:
        """Append what the socket holds to the buffer, without blocking (read lock held). Reads
        again after a full read (more may be there), never after a short one (the socket was
        empty then)."""

        recv, flag, want = self.sock.recv, self.dontwait, 1 << 16
        chunks = [self.buffer] if self.buffer else []
        while True:
            try:
                chunk = recv(want, flag)
            except BlockingIOError:
                break
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            if len(chunk) < want:
                break
        if chunks:
            self.buffer = chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def _whole_frame_buffered(self) -> bool:
        buffer = self.buffer
        return len(buffer) >= HEADER and len(buffer) >= _frame_size(buffer)

    def _take_frame(self) -> "tuple[bytes, int, bytes, bytes] | None":
        """The frame at the start of the buffer if it is whole (read lock held), else ``None``;
        a size outside the protocol ends the worker, as the parent's closing would."""

        buffer = self.buffer
        if len(buffer) < HEADER:
            return None
        size = _frame_size(buffer)
        if len(buffer) < size:
            return None
        self.buffer = buffer[size:]
        ident = int.from_bytes(buffer[5:9], "little")
        return buffer[4:5], ident, buffer[9:HEADER], buffer[HEADER:size]

    def _next_frame(self) -> "tuple[bytes, int, bytes, bytes]":
        """The next frame from the parent (read lock held), blocking until it is whole; reads
        ahead into a buffer, so that a small frame costs one system call."""

        while True:
            frame = self._take_frame()
            if frame is not None:
                return frame
            buffer = self.buffer
            if len(buffer) < HEADER:
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    raise EOFError
                self.buffer = buffer + chunk if buffer else chunk
            else:
                self.buffer = buffer + _read_exact(self.fd, _frame_size(buffer) - len(buffer))

    def _define(self, ident: int, body: bytes) -> None:
        try:
            function = _loads(body)
            # Read once here: ``__code__`` raises an audit event the guard judges.
            self.functions[ident] = (function, _is_coroutine_function(function))
        except BaseException as exc:  # reported on the calls of that function
            self.functions[ident] = (_Undefined(exc), False)

    def _call(self, ident: int, token: bytes, body: bytes) -> None:
        try:
            function_id, args, kwargs = _loads(body)
            function, is_async = self.functions[function_id]
            if type(function) is _Undefined:
                raise function.exc
            if is_async:
                loop = self._event_loop()
                run_threadsafe = sys.modules["asyncio"].run_coroutine_threadsafe
                future = run_threadsafe(function(*args, **kwargs), loop)
                future.add_done_callback(lambda done: self._finish_async(ident, token, done))
                return
            result = function(*args, **kwargs)
        except BaseException as exc:
            self._send_error(ident, token, exc)
            return
        self._send_result(ident, token, result)

    def _finish_async(self, ident: int, token: bytes, future: "Any") -> None:
        try:
            result = future.result()
        except BaseException as exc:
            self._send_error(ident, token, exc)
            return
        self._send_result(ident, token, result)

    def _send_result(self, ident: int, token: bytes, result: "Any") -> None:
        try:
            data = pickle.dumps(result, PROTOCOL)
        except BaseException as exc:
            self._send_error(ident, token, exc, "the result cannot be pickled")
            return
        if len(data) > self.max_result:
            self._send_error(ident, token, None, f"result of {len(data)} bytes", big=len(data))
            return
        self._write(encode_frame(RESULT, ident, data, token))

    def _send_error(
        self,
        ident: int,
        token: bytes,
        exc: "BaseException | None",
        context: str = "",
        big: int = 0,
    ) -> None:
        if exc is None:
            record: dict[str, Any] = {
                "module": "",
                "qualname": "",
                "too_big": big,
                "limit": self.max_result,
            }
        else:
            try:
                record = error_record(exc)
            except BaseException as inner:
                record = {"module": "builtins", "qualname": "RuntimeError", "message": repr(inner)}
        if context:
            record["context"] = context
        try:
            data = pickle.dumps(record, PROTOCOL)
        except Exception:  # a str subclass's __reduce__ of the program's, say
            data = pickle.dumps({"module": "builtins", "qualname": "RuntimeError"}, PROTOCOL)
        self._write(encode_frame(ERROR, ident, data, token))

    def _write(self, frame: bytes) -> None:
        with self.write_lock:
            try:
                written = os.write(self.fd, frame)  # a small frame: whole at once
                if written < len(frame):
                    view = memoryview(frame)[written:]
                    while view:
                        view = view[os.write(self.fd, view) :]
            except OSError:
                self.stopped.set()


class _Undefined:
    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def _is_coroutine_function(function: "Any") -> bool:
    code = getattr(function, "__code__", None)
    return code is not None and bool(code.co_flags & 0x80)  # CO_COROUTINE


def prepare(fields: "dict[str, str]") -> Server:
    """Before the guard is armed: standard output to standard error, the server (whose
    :meth:`Server.start_threads` the bootstrap calls last before arming)."""

    output = fields.get("output_fd")
    if output:
        # Standard output and error: the caller's relay (``partial.output``), which makes
        # control sequences harmless; nothing here keeps the caller's own descriptor.
        fd = int(output)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        try:  # noqa: SIM105 (no contextlib here) -- a line at a time, before the answer
            sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass
    else:
        os.dup2(2, 1)
    # A terminal's Ctrl-C reaches the whole foreground group, the worker included: the caller
    # decides (an interrupted call kills the worker), never the worker on its own.
    import _signal  # type: ignore[import-not-found,unused-ignore]

    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    fd = int(fields["worker_fd"])
    server = Server(fd, int(fields.get("threads", "8")), int(fields.get("max_result", "0")))
    _servers.append(server)
    return server


#: The server of this worker process (set by :func:`prepare`).
_servers: "list[Server]" = []


def take_channel() -> "tuple[int, bytes]":
    """The socket of this worker and the bytes read ahead from it, for a call that takes the
    channel over for a protocol of its own until the parent closes it (``guarded_eval``'s
    worker: ``evalguard/channel.py``; the call runs on the only reader thread of a
    ``threads=1`` worker, and the parent sends nothing more until the call answers)."""

    server = _servers[0]
    ahead, server.buffer = server.buffer, b""
    return server.fd, ahead
