"""An MCP server whose two tools run in the sandbox (python-sb partial mode).

- ``fetch(url)``: fetch a web page; its rule file lets it reach only the hosts and ports listed
  in ``net=`` lines, so an injected prompt cannot turn it against the intranet;
- ``calculate(expression)``: evaluate an arithmetic expression (numbers, + - * / ** and
  parentheses), with a small parser of its own: no ``eval``; it logs with ``print`` to stderr,
  never into the stdio protocol stream.

The transport stays in this process; only the tools run in the worker, under
``.py-sandboxes`` (next to this file). The two tools use the two decorator orders on purpose:
both are sandboxed. Works with the ``mcp`` SDK 1.x (``FastMCP``) and 2.x (``MCPServer``).

    python server.py                          # stdio
    python server.py streamable-http 8000     # or sse

Or the whole server under python-sb (complete mode: the tools are plain calls there), with a
rule file of its own learned once: ``python-sb --learn=whole.py-sandboxes server.py``, then
``python-sb --pysandboxes-config=whole.py-sandboxes server.py`` (docs/mcp.md).
"""

import sys
import urllib.request

from pysandboxes import sandbox
from pysandboxes.partial import mcp as sandboxed_mcp

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server

TRANSPORT = sys.argv[1] if len(sys.argv) > 1 else "stdio"
PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
V1 = Server.__name__ == "FastMCP"
server = Server("sandboxed-tools", **({"host": "127.0.0.1", "port": PORT} if V1 else {}))


@server.tool()
@sandbox(timeout=20)
def fetch(url: str) -> str:
    """Fetch a web page (at most 100 KB of it) and return its text."""

    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read(100_000).decode("utf-8", "replace")


@sandbox(timeout=10)  # seconds per call: generous, so that a busy machine does not kill it
@server.tool()
def calculate(expression: str) -> float:
    """Evaluate an arithmetic expression: numbers, + - * / ** and parentheses."""

    # To stderr: the protocol stream stays clean. (In partial mode the worker's stdout is the
    # server's stderr anyway; under python-sb, complete mode, this is the server's own print.)
    print(f"calculate: {expression!r}", file=sys.stderr)
    tokens = _tokens(expression)
    value, rest = _sum(tokens)
    if rest:
        raise ValueError(f"unexpected {rest[0]!r}")
    return value


def _tokens(text):
    tokens, number = [], ""
    for char in text + " ":
        if char.isdigit() or char == ".":
            number += char
            continue
        if number:
            tokens.append(float(number))
            number = ""
        if char in "+-*/()":
            if char == "*" and tokens and tokens[-1] == "*":
                tokens[-1] = "**"
            else:
                tokens.append(char)
        elif not char.isspace():
            raise ValueError(f"unexpected {char!r}")
    return tokens


def _sum(tokens):
    value, tokens = _product(tokens)
    while tokens and tokens[0] in ("+", "-"):
        operator, (right, tokens) = tokens[0], _product(tokens[1:])
        value = value + right if operator == "+" else value - right
    return value, tokens


def _product(tokens):
    value, tokens = _power(tokens)
    while tokens and tokens[0] in ("*", "/"):
        operator, (right, tokens) = tokens[0], _power(tokens[1:])
        value = value * right if operator == "*" else value / right
    return value, tokens


def _power(tokens):
    value, tokens = _atom(tokens)
    if tokens and tokens[0] == "**":
        exponent, tokens = _power(tokens[1:])
        if abs(exponent) > 1000:
            raise ValueError("exponent too large")
        value = value**exponent
    return value, tokens


def _atom(tokens):
    if not tokens:
        raise ValueError("unexpected end")
    first, rest = tokens[0], tokens[1:]
    if first == "(":
        value, rest = _sum(rest)
        if not rest or rest[0] != ")":
            raise ValueError("missing )")
        return value, rest[1:]
    if first == "-":
        value, rest = _atom(rest)
        return -value, rest
    if isinstance(first, float):
        return first, rest
    raise ValueError(f"unexpected {first!r}")


if __name__ == "__main__":
    options = {} if V1 or TRANSPORT == "stdio" else {"host": "127.0.0.1", "port": PORT}
    sandboxed_mcp.run(server, TRANSPORT, **options)
