"""An MCP server whose sandboxed tools use both decorator orders (tests/e2e/test_partial_mcp.py).

``python mcp_orders.py integration``: started with pysandboxes.partial.mcp.run;
``python mcp_orders.py plain``: started with the SDK's own run() inside ``with sandboxes()``.
"""

import sys

from pysandboxes import is_in_sandbox, sandbox, sandboxes
from pysandboxes.partial import mcp as sandboxed_mcp

try:
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:
    from mcp.server.fastmcp import Context
    from mcp.server.fastmcp import FastMCP as Server

server = Server("orders")


@server.tool()
@sandbox
def tool_over_sandbox() -> str:
    """Registered after @sandbox: the wrapper."""
    return f"sandboxed={is_in_sandbox()}"


@sandbox
@server.tool()
def sandbox_over_tool() -> str:
    """Registered before @sandbox: the original, re-pointed."""
    return f"sandboxed={is_in_sandbox()}"


@server.tool()
@sandbox
async def with_context(value: int, ctx: Context) -> str:
    """The Context stays in the server: the function gets None in the worker."""
    return f"sandboxed={is_in_sandbox()} ctx={ctx!r} value={value}"


@server.tool()
def unsandboxed() -> str:
    """An ordinary tool, in the server's own process."""
    return f"sandboxed={is_in_sandbox()}"


if __name__ == "__main__":
    if sys.argv[1] == "integration":
        sandboxed_mcp.run(server, "stdio")
    else:
        with sandboxes():
            server.run("stdio")
