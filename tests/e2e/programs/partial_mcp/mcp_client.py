"""Drive an MCP server with the SDK's own client (1.x or 2.x, whichever this interpreter has).

    python mcp_client.py stdio SERVER_SCRIPT CWD ENV_JSON CALLS_JSON [SERVER_ARGS...]
    python mcp_client.py (streamable-http | sse) URL CALLS_JSON

CALLS_JSON is a list of [tool, arguments]; prints {"tools": [...], "calls": [{"error", "text"}]}.
"""

import asyncio
import json
import sys


async def session_calls(session, calls):
    await session.initialize()
    listed = await session.list_tools()
    results = []
    for name, arguments in calls:
        result = await session.call_tool(name, arguments)
        is_error = getattr(result, "is_error", None)
        if is_error is None:
            is_error = getattr(result, "isError", False)
        text = "".join(getattr(item, "text", "") for item in result.content or [])
        results.append({"error": bool(is_error), "text": text})
    return {"tools": sorted(tool.name for tool in listed.tools), "calls": results}


async def over_stdio(script, cwd, env, calls, server_args):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=[script, *server_args], env=env, cwd=cwd
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        return await session_calls(session, calls)


async def over_http(transport, url, calls):
    from mcp import ClientSession

    if transport == "sse":
        from mcp.client.sse import sse_client as connect
    else:
        try:
            from mcp.client.streamable_http import streamablehttp_client as connect
        except ImportError:
            from mcp.client.streamable_http import streamable_http_client as connect
    async with connect(url) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            return await session_calls(session, calls)


def main():
    if sys.argv[1] == "stdio":
        script, cwd, env, calls = sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5]
        result = asyncio.run(over_stdio(script, cwd, env, json.loads(calls), sys.argv[6:]))
    else:
        result = asyncio.run(over_http(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
    print(json.dumps(result))


main()
