"""Drive an MCP server over stdio with the mcp SDK's own client.

    python mcp_client.py CWD ENV_JSON CALLS_JSON COMMAND [ARGS...]

Starts ``COMMAND ARGS`` (``python-sb server.py``, ``python server.py``) as the server, lists
its tools, makes each call of CALLS_JSON (a list of [tool, arguments]) and prints
{"tools": [...], "calls": [{"error": bool, "text": str}]} as JSON.
"""

import asyncio
import json
import sys


async def main(cwd, env, calls, command):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=cwd)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
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


if __name__ == "__main__":
    cwd, env, calls = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
    print(json.dumps(asyncio.run(main(cwd, env, calls, sys.argv[4:]))))
