"""MCP servers whose tools run in the sandbox (the ``mcp`` SDK's FastMCP / MCPServer, 1.x and
2.x): ``pysandboxes.partial.mcp.run(server, transport, **options)``.

The server keeps its transport (stdio, SSE, streamable HTTP) and its rights; every tool marked
``@sandbox`` runs in the worker. FastMCP registers a function in its tool manager when its
``@server.tool()`` decorator runs, so the decorator order decides what is registered:

- ``@server.tool()`` over ``@sandbox``: the sandbox's wrapper;
- ``@sandbox`` over ``@server.tool()``: the *original* function, which would run unsandboxed.

:func:`install` (called by :func:`run`) makes the order irrelevant: it walks the server's tools
and registers, for every tool whose function is marked (the original or the wrapper), an
``async`` adapter that calls the worker. The adapter keeps the tool's ``ctx: Context`` in the
parent (the function receives ``None`` for it in the worker), and turns a ``SandBoxError`` into
the SDK's ``ToolError`` with the refusal's text (the rule, and the line that would allow it), so
the client reads why a tool was refused instead of a generic error. ``@sandbox`` also re-points
a tool already registered when it decorates (the second order, for a server started with its
own ``run()``); a server started that way gets the wrapper's behaviour (a sync call, errors as
the SDK reports them).
"""

from __future__ import annotations

import sys

from pysandboxes.errors import SandBoxError, sandbox_denials
from pysandboxes.partial.api import REGISTRY, Marked, _route, is_in_sandbox, sandboxes
from pysandboxes.partial.errors import PartialModeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _tool_error_class() -> type[Exception]:
    for name in ("mcp.server.mcpserver.exceptions", "mcp.server.fastmcp.exceptions"):
        module = sys.modules.get(name)
        if module is not None:
            cls: type[Exception] = module.ToolError
            return cls
    raise PartialModeError("the mcp SDK is not loaded: create the server before install()")


def _tools(server: Any) -> dict[str, Any]:
    manager = getattr(server, "_tool_manager", None)
    tools = getattr(manager, "_tools", None)
    if not isinstance(tools, dict):
        raise PartialModeError(
            f"{type(server).__name__} is not a FastMCP/MCPServer of a known mcp SDK version "
            "(no tool manager): its tools cannot be sandboxed"
        )
    return tools


def _marked(function: Any) -> Marked | None:
    marked = getattr(function, "__sandbox_marked__", None)
    if isinstance(marked, Marked):
        return marked
    for entry in REGISTRY:
        if entry.function is function:
            return entry
    return None


def refusal_text(exc: BaseException) -> str:
    """What the client reads for a sandboxed tool's error: the message, and each refusal's
    rule and origin."""

    text = str(exc).split("\nTraceback in the sandbox")[0]
    for denial in sandbox_denials(exc):
        if denial.rule:
            line = f"refused by the rule '{denial.rule}' from {denial.origin}"
        else:
            line = f"refused: no rule allows {denial.kind} {denial.target}"
        if denial.suggestion:
            line += f" (the line that would allow it: {denial.suggestion})"
        if line not in text:
            text += "\n" + line
    return text


def adapter(marked: Marked, context_kwarg: str | None) -> Callable[..., Any]:
    """The ``async`` function registered for a sandboxed tool (see the module docstring)."""

    tool_error = _tool_error_class()

    async def sandboxed_tool(**kwargs: Any) -> Any:
        if context_kwarg is not None and context_kwarg in kwargs:
            kwargs[context_kwarg] = None  # the Context stays in the parent
        worker, timeout = _route(marked)
        try:
            return await worker.acall(marked.function, (), kwargs, timeout=timeout)
        except Exception as exc:
            # A refusal anywhere in the chain (urllib wraps a refused connection in URLError),
            # a timeout, a dead worker: the client reads why. Other errors are the tool's own,
            # reported as the SDK reports them.
            if isinstance(exc, SandBoxError) or sandbox_denials(exc):
                raise tool_error(refusal_text(exc)) from exc
            raise
        finally:
            if marked.fresh:
                worker.close()

    sandboxed_tool.__name__ = getattr(marked.function, "__name__", "tool")
    sandboxed_tool.__doc__ = marked.function.__doc__
    sandboxed_tool.__sandbox_marked__ = marked  # type: ignore[attr-defined]
    return sandboxed_tool


def install(server: Any) -> list[str]:
    """Register the adapter for every marked tool of ``server``; the names of those tools."""

    done = []
    for name, tool in _tools(server).items():
        marked = _marked(tool.fn)
        if marked is None:
            continue
        if getattr(tool.fn, "__name__", "") == "sandboxed_tool" and getattr(
            tool.fn, "__sandbox_marked__", None
        ):
            done.append(name)
            continue
        tool.fn = adapter(marked, tool.context_kwarg)
        tool.is_async = True
        done.append(name)
    return done


def run(server: Any, transport: str = "stdio", /, **options: Any) -> None:
    """Run ``server`` with its ``@sandbox`` tools in the sandbox: ``sandboxes(**sandbox_options)``
    around ``server.run(transport, **server_options)``.

    ``options`` holds both: the keywords of :class:`~pysandboxes.sandboxes` (``rules``,
    ``timeout``, rule keywords...) go to the sandbox when they are given as ``sandbox={...}``;
    the others go to ``server.run`` (``host=``, ``port=`` with the 2.x SDK).
    """

    sandbox_options = options.pop("sandbox", {}) or {}
    if is_in_sandbox():  # the whole server under python-sb: its tools are plain calls
        server.run(transport, **options)
        return
    with sandboxes(**sandbox_options):
        install(server)
        server.run(transport, **options)


def repoint_registered(original: Any, wrapper: Any) -> None:
    """A tool registered before ``@sandbox`` decorated its function (``@sandbox`` over
    ``@server.tool()``) is re-pointed to the wrapper, so that it never runs unsandboxed. Called by
    ``@sandbox`` when the mcp SDK is loaded."""

    import gc

    for holder in gc.get_referrers(original):
        if type(holder) is not dict:
            continue
        for owner in gc.get_referrers(holder):
            kind = type(owner)
            if (
                kind.__name__ == "Tool"
                and kind.__module__.startswith("mcp.")
                and getattr(owner, "fn", None) is original
            ):
                owner.fn = wrapper
