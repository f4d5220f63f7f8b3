"""Partial mode's public API (SPEC §6): ``@sandbox``, ``sandboxes()``, ``run()``,
``is_in_sandbox()``.

``@sandbox`` records the function in a registry when it is decorated (the worker receives the
function itself, by value: ``partial.shipping``) and returns a wrapper of the same kind (sync or
``async``). A call of the wrapper goes to the worker of the active :class:`sandboxes` context
that serves the function's rule file: the context's own rules, or the ``rules=`` given to
``@sandbox`` (a profile: one worker per rule file, started at its first call). Under
``python-sb`` (complete mode), and inside a worker, the wrapper is a plain call.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import weakref

from pysandboxes.partial.errors import PartialModeError
from pysandboxes.partial.pool import DEFAULT_MAX_RESULT, Worker, _check_timeout
from pysandboxes.partial.results import allowed_globals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine, Iterable
    from typing import Any, TypeVar

    T = TypeVar("T")


def is_in_sandbox() -> bool:
    """Whether this code runs under python-sb: a whole program (complete mode) or a worker."""

    # (Not getattr with a default: in a caller, where it is missing, that raises and catches
    # an AttributeError at every call of a sandboxed function.)
    return bool(vars(sys).get("_pysandboxes_child", ""))


class Marked:
    """A function marked with ``@sandbox`` and its options (the registry's entry)."""

    __slots__ = (
        "__weakref__",
        "fresh",
        "function",
        "is_async",
        "max_result",
        "returns",
        "rules",
        "timeout",
    )

    def __init__(
        self,
        function: Callable[..., Any],
        rules: str | None,
        timeout: float | None,
        fresh: bool,
        returns: str | Iterable[type] | None,
        max_result: int | None,
    ) -> None:
        self.function = function
        self.rules = rules
        self.timeout = timeout
        self.fresh = fresh
        self.returns = returns
        self.max_result = max_result
        code = getattr(function, "__code__", None)
        self.is_async = code is not None and bool(code.co_flags & 0x80)  # CO_COROUTINE


#: Every marked function alive (its wrapper holds it), never looked up by name: a nested
#: function marked at each call of its factory leaves when its wrapper does.
REGISTRY: weakref.WeakSet[Marked] = weakref.WeakSet()


def sandbox(
    function: Any = None,
    *,
    rules: str | None = None,
    timeout: float | None = None,
    fresh: bool = False,
    returns: str | Iterable[type] | None = None,
    max_result: int | None = None,
) -> Any:
    """Mark ``function`` to run in the sandbox (``@sandbox`` or ``@sandbox(rules=..., ...)``).

    ``rules``: this function's own rule file (a profile, its own worker); ``timeout``: seconds
    per call (the worker is killed when it expires); ``fresh``: a new worker for every call;
    ``returns``: what its results may hold (``"data"``, ``"objects"`` or a list of classes);
    ``max_result``: its largest pickled result (a fresh worker's limit).
    """

    if rules is not None:
        rules = rule_file_path(rules)
    if returns is not None:
        allowed_globals(returns)  # a bad value is an error when decorating, not at the call
    if timeout is not None:
        _check_timeout(timeout)

    def mark(target: Any) -> Any:
        if isinstance(target, staticmethod | classmethod):
            return type(target)(mark(target.__func__))
        if not callable(target) or not hasattr(target, "__code__"):
            raise PartialModeError(f"@sandbox marks a function, not {target!r}")
        marked = Marked(target, rules, timeout, fresh, returns, max_result)
        REGISTRY.add(marked)
        if marked.is_async:

            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                if is_in_sandbox():
                    return await target(*args, **kwargs)
                worker, timeout_ = _route(marked)
                if kwargs and "mcp" in sys.modules:
                    kwargs = _without_mcp_context(kwargs)
                try:
                    return await worker.acall(target, args, kwargs, timeout=timeout_)
                finally:
                    if marked.fresh:
                        worker.close()

            wrapper: Any = async_wrapper
        else:

            def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
                if is_in_sandbox():
                    return target(*args, **kwargs)
                worker, timeout_ = _route(marked)
                if kwargs and "mcp" in sys.modules:
                    kwargs = _without_mcp_context(kwargs)
                try:
                    return worker.call(target, args, kwargs, timeout=timeout_)
                finally:
                    if marked.fresh:
                        worker.close()

            wrapper = sync_wrapper
        functools.update_wrapper(wrapper, target)
        wrapper.__sandbox_original__ = target
        wrapper.__sandbox_marked__ = marked
        if "mcp" in sys.modules:  # @sandbox over @server.tool(): never a tool left outside
            from pysandboxes.partial.mcp import repoint_registered

            repoint_registered(target, wrapper)
        return wrapper

    if function is not None:
        return mark(function)
    return mark


# -- the context -----------------------------------------------------------------------------------

_active_lock = threading.Lock()


def rule_file_path(rules: Any) -> str:
    """The absolute path ``rules=`` names (``~`` expanded). A rule file that does not exist is
    learned into, as on the command line; but text that does not exist and reads as rules
    (a line break, or a ``key=value`` name) is a mistake, never a file to create: a rule file
    named ``./eval-call=__import__`` would be written and the rules meant would not apply."""

    if not isinstance(rules, (str, os.PathLike)):
        raise PartialModeError(
            f"rules= names a rule file (a path), not {type(rules).__name__}: rule lines are "
            "keywords (sandboxes(python_import='json'))"
        )
    path = os.path.abspath(os.path.expanduser(os.fspath(rules)))
    text = os.fspath(rules)
    if not os.path.exists(path) and ("\n" in text or "=" in os.path.basename(text)):
        raise PartialModeError(
            f"rules={text!r} names no file and reads as rule text: rules= names a rule file "
            "(a path; a missing one is learned into); rule lines are keywords "
            "(sandboxes(python_import='json'), '-' for '_' in the key)"
        )
    return path


class sandboxes:
    """Start the worker(s) for the ``@sandbox`` functions: ``with sandboxes(): ...`` or
    ``async with sandboxes(): ...``.

    ``rules``: the rule file (default: as ``python-sb`` locates it for the calling script);
    ``timeout``: default seconds per call; ``learn``: ``True`` or a file, as ``--learn`` (refused
    under the lock); ``threads``: concurrent sync calls per worker; ``max_result``: the largest
    pickled result; ``max_restarts``: new workers allowed after deaths and timeouts;
    ``returns``: what results may hold by default; ``init_fn``: run in each new worker first;
    ``raw_output``: what functions print reaches the caller's standard error byte for byte,
    control sequences included (default: relayed with them made harmless); other keywords
    are rule lines (``python_import="json"`` is ``python-import=json``).

    Only one context is active at a time in a process: entering a second one with the same
    options shares the first; with different options it is an error (never a silent reuse).
    """

    _active: sandboxes | None = None
    _shared: sandboxes | None = None

    def __init__(
        self,
        rules: str | None = None,
        *,
        timeout: float | None = None,
        learn: str | bool | None = None,
        threads: int = 8,
        max_result: int = DEFAULT_MAX_RESULT,
        max_restarts: int = 10,
        returns: str | Iterable[type] = "data",
        init_fn: Callable[[], Any] | None = None,
        sandboxes_config: str | None = None,
        raw_output: bool = False,
        **keyword_rules: Any,
    ) -> None:
        if rules is not None and sandboxes_config is not None:
            raise PartialModeError("give rules= or sandboxes_config=, not both")
        rules = rules if rules is not None else sandboxes_config
        allowed_globals(returns)
        _check_timeout(timeout)
        self.rules = rule_file_path(rules) if rules is not None else None
        self.options: dict[str, Any] = {
            "timeout": timeout,
            "learn": learn,
            "threads": threads,
            "max_result": max_result,
            "max_restarts": max_restarts,
            "returns": returns,
            "init_fn": init_fn,
            "raw_output": bool(raw_output),
            "keyword_rules": dict(keyword_rules),
        }
        self.caller_file = _caller_file()
        self.workers: dict[str | None, Worker] = {}
        self._depth = 0
        self._lock = threading.Lock()

    def _key(self) -> tuple[Any, ...]:
        options = dict(self.options)
        returns = options.pop("returns")
        rules = options.pop("keyword_rules")
        return (
            self.rules,
            tuple(sorted((k, repr(v)) for k, v in options.items())),
            returns if isinstance(returns, str) else tuple(returns),
            tuple(sorted((k, repr(v)) for k, v in rules.items())),
        )

    def worker_for(self, rules: str | None, max_result: int | None = None) -> Worker:
        """The worker serving ``rules`` (``None``: the context's own), started if needed."""

        with self._lock:
            worker = self.workers.get(rules)
            if worker is None:
                worker = self._new_worker(rules, max_result)
                self.workers[rules] = worker
        return worker

    def _new_worker(self, rules: str | None, max_result: int | None = None) -> Worker:
        options = self.options
        return Worker(
            rules if rules is not None else self.rules,
            keyword_rules=options["keyword_rules"],
            learn=options["learn"],
            timeout=options["timeout"],
            threads=options["threads"],
            max_result=max_result or options["max_result"],
            max_restarts=options["max_restarts"],
            returns=options["returns"],
            init_fn=options["init_fn"],
            raw_output=options["raw_output"],
            caller_file=self.caller_file if rules is None and self.rules is None else None,
        )

    def __enter__(self) -> sandboxes:
        if is_in_sandbox():
            # The whole program runs under python-sb (complete mode), or this is a worker: the
            # @sandbox functions are plain calls here, so no worker is started (SPEC §6).
            return self
        with _active_lock:
            active = sandboxes._active
            if active is not None and active is not self:
                if active._key() != self._key():
                    raise PartialModeError(
                        "a sandboxes() context with other rules or options is already active "
                        "(one per process: nest only identical ones, or give functions their "
                        "own rule file with @sandbox(rules=...))"
                    )
                active._depth += 1
                self._shared = active
                return active
            self._shared = None
            if self._depth == 0:
                sandboxes._active = self
                try:
                    worker = self.worker_for(None)
                    worker.start()
                    # Profiles of the functions marked so far: their rules are checked now.
                    for rules in {m.rules for m in REGISTRY if m.rules is not None}:
                        self.worker_for(rules)
                except BaseException:
                    sandboxes._active = None
                    self._close_workers()
                    raise
            self._depth += 1
        return self

    def __exit__(self, *exc_info: object) -> None:
        if is_in_sandbox():
            return  # nothing was started (__enter__)
        with _active_lock:
            target = self._shared or self
            target._depth -= 1
            if target._depth > 0:
                return
            sandboxes._active = None
        target._close_workers()

    def _close_workers(self) -> None:
        workers, self.workers = list(self.workers.values()), {}
        for worker in workers:
            worker.close()

    async def __aenter__(self) -> sandboxes:
        import asyncio

        return await asyncio.to_thread(self.__enter__)

    async def __aexit__(self, *exc_info: object) -> None:
        import asyncio

        await asyncio.to_thread(self.__exit__, *exc_info)


def _without_mcp_context(kwargs: dict[str, Any]) -> dict[str, Any]:
    """An MCP ``Context`` argument stays in the caller: the function gets ``None`` for it (the
    SDK passes it by keyword to a tool that asks for it)."""

    for key, value in kwargs.items():
        kind = type(value)
        if kind.__name__ == "Context" and kind.__module__.startswith("mcp."):
            return {k: (None if k == key else v) for k, v in kwargs.items()}
    return kwargs


def _route(marked: Marked) -> tuple[Worker, float | None]:
    context = sandboxes._active
    if context is None:
        raise PartialModeError(
            f"{marked.function.__qualname__} is marked @sandbox, but no sandboxes() context is "
            "active: call it inside 'with sandboxes():' (or pysandboxes.run)"
        )
    if marked.fresh:
        worker = context._new_worker(marked.rules, marked.max_result)
    else:
        worker = context.worker_for(marked.rules, marked.max_result)
    if marked.returns is not None:
        worker = _ReturnsView(worker, marked.returns)  # type: ignore[assignment]
    return worker, marked.timeout


class _ReturnsView:
    """A worker seen with a function's own ``returns=``."""

    def __init__(self, worker: Worker, returns: str | Iterable[type]) -> None:
        from pysandboxes.partial.results import allowed_globals

        self.worker = worker
        self.allowed = allowed_globals(returns)

    def call(self, function: Any, args: Any, kwargs: Any, *, timeout: float | None) -> Any:
        return self.worker.call(function, args, kwargs, timeout=timeout, allowed=self.allowed)

    async def acall(self, function: Any, args: Any, kwargs: Any, *, timeout: float | None) -> Any:
        return await self.worker.acall(
            function, args, kwargs, timeout=timeout, allowed=self.allowed
        )

    def close(self) -> None:
        self.worker.close()


def run(main: Coroutine[Any, Any, T] | Awaitable[T], **options: Any) -> T:
    """``asyncio.run(main)`` inside ``async with sandboxes(**options)``."""

    import asyncio

    async def runner() -> T:
        async with sandboxes(**options):
            return await main

    return asyncio.run(runner())


def _caller_file() -> str | None:
    """The file of the code that created the context, outside this package (for the rule file
    lookup, as ``python-sb script.py`` does)."""

    frame = sys._getframe(1)
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(package) and not filename.startswith("<"):
            return os.path.abspath(filename) if os.path.exists(filename) else None
        frame = frame.f_back  # type: ignore[assignment]
    return None
