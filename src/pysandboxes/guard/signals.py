"""Python signal handlers: never run inside the audit hook, never handed a frame of the guard.

CPython runs a Python signal handler at the next check of the eval loop, wherever the main
thread is -- possibly inside the audit hook's own Python code -- and passes it the frame it
interrupted, with no audit event. A handler that lands in the hook (an asynchronous ``SIGIO``
of a socket, a timer, a signal from another process) could walk that frame's ``f_back`` and
``f_locals`` (no events either) to the hook's dispatch table and empty it: a total disarm
(``tests/redteam/review/attacks/r2_disarm_async_signal_frame.py``). It could also raise an
exception in the middle of a judgment (an ``OSError`` where the guard expects one from the
system), and it would share the busy mark that lets the guard's own events through.

Worse, any program code that runs with a guard frame below it on the stack can reach that
frame: a generator that kept its own frame earlier (``sys._getframe`` while no guard frame was
a caller) and is resumed there sees its ``f_back`` chain lead into the guard
(``attacks/r3_disarm_sigpipe_queued_kept_frame.py``).

A handler can also run *between* a judgment and the system call it allowed: ``open()``
retries after ``EINTR`` once the handlers have run, on the path judged before. A handler that
swaps a symbolic link (or changes directory) there would have the kernel open another file
(``attacks/files_signal_eintr_chdir.py``). The trampoline therefore judges the last ``open()``'s
path again after the handler returns (``recheck``): a refusal leaves the handler, and the
``open()`` fails with it. (``os.open`` and ``os.mkfifo`` are wrapped: a signal during their
retry interrupts guard frames and is queued.)

So :func:`install` wraps ``_signal.signal`` (what ``signal.signal`` calls) and
``_signal.getsignal``: a Python handler is installed behind a trampoline that

- when the signal interrupted guard code (a frame of a guard module is in the chain: the hook,
  the import check, a wrapper's hidden generator), queues it;
- otherwise calls the handler at once (the interrupted frame chain is the program's alone).

The hook runs the queue as it returns, once its judgment is made: ``take()`` gives the calls
due (none while an outer hook is still running below), the hook deletes every name that leads
to the guard's state, then makes the calls from its own frame, which then holds only the
event, its arguments and the program's handlers. Each handler gets the first frame outside
the guard as its ``frame`` argument. The signal number (``__index__``) and a non-callable
handler are made exact ``int`` before the hidden original is entered: no program code runs in
its generator (``attacks/r3_disarm_signal_index_original.py``).

``signal.signal`` and ``signal.getsignal`` return the program's handler, not the trampoline.
The handler's own frame still has guard frames as callers: ``sys._getframe`` and ``tb_frame``
are refused for such a frame (``hook.py``). C handlers (``default_int_handler``: Ctrl-C) are
left alone: the ``KeyboardInterrupt`` they raise passes through the guard like any exception.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from pysandboxes.guard.kit import Kit


def install(
    kit: Kit,
    guard_globals: frozenset[int],
    busy: dict[int, int],
    hidden_globals: frozenset[int] = frozenset(),
    window_state: Callable[[], Any] = lambda: None,
    recheck: Callable[[Any], None] = lambda state: None,
    handler_depth: list[int] | None = None,
) -> tuple[list[Any], Callable[[], bool], Callable[[], list[Any]]]:
    """Put the trampolines in place. Returns the queue of signals that came while guard code
    ran; ``safe()``, true when the hook that calls it was raised by the program's own code (no
    guard frame below, not busy: program code may run there once the hook holds nothing);
    and ``take()``, the ``(handler, signum, frame)`` calls due (in the main thread; the queue
    is emptied).

    ``guard_globals``: ``kit.identity`` of the guard modules' globals; ``hidden_globals``:
    those of the hidden originals' generators rebuilt outside the guard's modules
    (``native_files.OUTSIDE_SCOPE``): not guard frames for ``sys._getframe``, but frames a
    handler must not run above either. The originals are kept by
    :func:`pysandboxes.guard.wrappers.hide` (a closure would hand the raw ``_signal.signal``
    to anyone reading ``__closure__``)."""

    import _signal  # type: ignore[import-not-found]  # the C module (signal imports enum)

    from pysandboxes.guard.kit import make_busy
    from pysandboxes.guard.wrappers import hide

    c_signal = _signal.signal
    c_getsignal = _signal.getsignal
    id_ = id
    identity = kit.identity  # the key of guard_globals (hook.py)
    len_ = kit.len
    callable_ = callable
    exact_int = int.__index__  # the value of an int (subclass), no program code
    get_ident = kit.get_ident
    getframe = kit.getframe
    main_thread = get_ident()  # arming runs in the main thread, where handlers run
    enter, leave = make_busy(kit, busy)
    # id(trampoline) -> (trampoline, the program's handler)
    trampolines: dict[int, tuple[Any, Any]] = {}
    pending: list[Any] = []  # (handler, signum) that came while the hook ran

    guarded = guard_globals | hidden_globals
    depth = handler_depth if handler_depth is not None else [0]

    def placement(frame: Any) -> Any:
        """The first frame above every frame of the guard and of the hidden originals'
        generators in ``frame``'s chain (``frame`` itself when there is none). ``f_globals``
        and ``f_back`` raise no audit event."""

        given = frame
        while frame is not None:
            if identity(frame.f_globals) in guarded:
                given = frame.f_back
            frame = frame.f_back
        return given

    def make_trampoline(handler: Callable[[int, Any], Any]) -> Callable[[int, Any], Any]:
        def trampoline(signum: int, frame: Any) -> Any:
            if placement(frame) is not frame:
                # Guard code was interrupted: the handler must not run with it on the stack.
                frame = None
                pending.append((handler, signum))
                return None
            # The handler may run inside open()'s EINTR retry loop, between the judgment of
            # the path and the retried system call: that path is judged again after it.
            state = window_state()
            depth[0] += 1  # the tree changes the handler makes keep that state (files.py)
            try:
                result = handler(signum, frame)
            finally:
                depth[0] -= 1
            recheck(state)
            return result

        return trampoline

    def safe() -> bool:
        if get_ident() in busy:
            return False  # the guard's own work (this function's getframe too)
        state = enter()
        try:
            # The hook's body called this; above it, the frame whose operation was judged
            # (none for an event C code raises with no Python frame running).
            below = getframe(1).f_back
            return placement(below) is below  # no guard frame, no hidden generator below
        finally:
            leave(state)

    def take() -> list[Any]:
        if get_ident() != main_thread or not pending:
            return []
        state = enter()
        try:
            given = placement(getframe(1).f_back)  # the hook's body called this
        finally:
            leave(state)
        calls = [(handler, signum, given) for handler, signum in pending]
        pending.clear()
        return calls

    def unwrap(handler: Any) -> Any:
        entry = trampolines.get(id_(handler))
        if entry is not None and entry[0] is handler:
            return entry[1]
        return handler

    def before_signal(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # Runs in the hidden generator: no program code may run here (int.__index__ of an
        # int subclass and callable() run none); the exposed wrapper's conversions are not
        # trusted, since its closure cells can be rewritten (attacks/r4_*signal_cell*).
        if len_(args) == 2 and not kwargs:
            signum = exact_int(args[0])  # TypeError for what is not an int: no __index__
            handler = args[1]
            if callable_(handler):
                trampoline = make_trampoline(handler)
                trampolines[id_(trampoline)] = (trampoline, handler)
                return (signum, trampoline), kwargs
            return (signum, exact_int(handler)), kwargs  # SIG_DFL, SIG_IGN: compared by C
        return args, kwargs

    def after_signal(previous: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        result = unwrap(previous)
        if result is not previous:
            del trampolines[id_(previous)]  # it was installed for this one signal
        return result

    def after_getsignal(current: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return unwrap(current)

    def before_getsignal(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if len_(args) == 1 and not kwargs:
            return (exact_int(args[0]),), kwargs
        return args, kwargs

    call_signal = hide(c_signal, kit, before_signal, after_signal)
    call_getsignal = hide(c_getsignal, kit, before_getsignal, after_getsignal)
    signal, getsignal = _exposed(call_signal, call_getsignal, c_signal, c_getsignal)
    _signal.signal = signal
    _signal.getsignal = getsignal
    return pending, safe, take


def _exposed(
    call_signal: Callable[[tuple[Any, ...], dict[str, Any]], Any],
    call_getsignal: Callable[[tuple[Any, ...], dict[str, Any]], Any],
    c_signal: Any,
    c_getsignal: Any,
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``_signal.signal`` and ``_signal.getsignal`` as the program gets them: they convert the
    signal number and a numeric handler with ``__index__`` (program code, run here, outside the
    hidden generators), then call the hidden originals. Made by a function of their own so that
    their closure cells -- which the program can read and *rewrite* with no audit event -- are
    not the cells the hidden ``before``/``after`` functions use: rewriting them changes only
    what the program passes, which the hidden side checks again exactly."""

    import _operator  # type: ignore[import-not-found]  # operator.index, without operator

    to_index = _operator.index  # runs __index__: only outside the hidden generator
    exact_int = int.__index__  # the value of an int (subclass), no program code
    len_, callable_, type_error = len, callable, TypeError

    def exact_number(value: Any) -> int:
        return exact_int(to_index(value))  # __index__ runs here, in this wrapper's frame

    def signal(*args: Any, **kwargs: Any) -> Any:
        if len_(args) == 2 and not kwargs:
            handler = args[1]
            if not callable_(handler):
                try:
                    handler = exact_number(handler)  # SIG_DFL, SIG_IGN (compared with ==)
                except type_error:
                    raise type_error(
                        "signal handler must be signal.SIG_IGN, signal.SIG_DFL, or a callable "
                        "object"
                    ) from None
            args = (exact_number(args[0]), handler)
        return call_signal(args, kwargs)

    def getsignal(*args: Any, **kwargs: Any) -> Any:
        if len_(args) == 1 and not kwargs:
            args = (exact_number(args[0]),)
        return call_getsignal(args, kwargs)

    signal.__doc__ = c_signal.__doc__
    getsignal.__doc__ = c_getsignal.__doc__
    signal.__module__ = getsignal.__module__ = "_signal"
    return signal, getsignal
