"""Partial mode: a sandboxed call against a plain call, in one run (issue 13's targets).

Measured in a fresh program (the venv's python with the API, ``os-sandbox=landlock`` with the
Python layer on) that prints one JSON object:

- sequential calls per second of a trivial ``@sandbox`` function, next to the same function
  called plainly and to a bare socketpair round trip between two processes (the floor of any
  out-of-process call here); target >= 20,000 calls/s;
- a 100 KB round trip (100 KB argument, 100 KB result); target <= 2 ms;
- worker start-up (``Worker.start()``: planning, provider, interpreter, guard, threads), next
  to ``python3 -c pass``; target <= 150 ms;
- the worker's resident memory (``VmRSS`` of its interpreter); target <= 30 MB;
- an MCP tool call over stdio (the SDK's client and server, 2.x), sandboxed against the same
  tool unsandboxed; target within x1.5.

When ``BENCH_REFERENCE_PYTHON`` names an interpreter with the reference implementation
(``pysandboxes==0.7.0``, installed in a separate venv, never in this one), its calls per second
are measured the same way and shown next to ours.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import textwrap
from pathlib import Path
from typing import Any

from cases import PYTHON3

PROGRAM = textwrap.dedent(
    """
    import json, os, socket, statistics, subprocess, sys, time
    from pysandboxes import sandbox, sandboxes
    from pysandboxes.partial.pool import Worker

    RULES = sys.argv[1]
    N = int(sys.argv[2])

    @sandbox
    def trivial():
        return None

    @sandbox
    def echo(data):
        return data

    def plain():
        return None

    def rate(function, n):
        best = 0.0
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(n):
                function()
            best = max(best, n / (time.perf_counter() - start))
        return best

    def bare_round_trips(n):
        a, b = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            a.close()
            while True:
                data = b.recv(64)
                if not data:
                    os._exit(0)
                b.sendall(data)
        b.close()
        best = 0.0
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(n):
                a.sendall(b"x" * 32)
                a.recv(64)
            best = max(best, n / (time.perf_counter() - start))
        a.close()
        os.waitpid(pid, 0)
        return best

    result = {}
    with sandboxes(RULES) as pool:
        trivial()
        result["sandboxed_calls_per_s"] = rate(trivial, N)
        result["plain_calls_per_s"] = rate(plain, N * 20)
        result["bare_round_trips_per_s"] = bare_round_trips(N)
        payload = b"x" * 100_000
        echo(payload)
        times = []
        for _ in range(200):
            start = time.perf_counter()
            echo(payload)
            times.append(time.perf_counter() - start)
        result["round_trip_100kb_ms"] = statistics.median(times) * 1000
        pid = pool.worker_for(None).pid
        rss = 0
        # The interpreter is the worker process itself (landlock) or its descendant.
        candidates = [pid]
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as handle:
                candidates += [int(p) for p in handle.read().split()]
        except OSError:
            pass
        for candidate in candidates:
            try:
                with open(f"/proc/{candidate}/status") as handle:
                    for line in handle:
                        if line.startswith("VmRSS:"):
                            rss = max(rss, int(line.split()[1]))
            except OSError:
                pass
        result["worker_rss_mb"] = rss / 1024
    starts = []
    for _ in range(int(sys.argv[3])):
        worker = Worker(RULES)
        start = time.perf_counter()
        worker.start()
        worker.call(plain)
        starts.append(time.perf_counter() - start)
        worker.close()
    result["worker_start_ms"] = statistics.median(starts) * 1000
    print(json.dumps(result))
    """
)

#: The reference resolves functions by importing their module by name in its child: the
#: function lives in a module of its own (a ``__main__`` function fails there).
REFERENCE_TOOLS = textwrap.dedent(
    """
    from pysandboxes import sandbox

    @sandbox
    def trivial():
        return None
    """
)

REFERENCE = textwrap.dedent(
    """
    import json, sys, time
    from pysandboxes import sandboxes
    from reference_tools import trivial

    N = int(sys.argv[1])
    with sandboxes():
        trivial()
        start = time.perf_counter()
        for _ in range(N):
            trivial()
        print(json.dumps({"reference_calls_per_s": N / (time.perf_counter() - start)}))
    """
)


MCP_SERVER = textwrap.dedent(
    """
    from pysandboxes import sandbox
    from pysandboxes.partial import mcp as sandboxed_mcp
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench")

    @server.tool()
    @sandbox
    def sandboxed(text: str) -> str:
        return text.upper()

    @server.tool()
    def plain(text: str) -> str:
        return text.upper()

    sandboxed_mcp.run(server, "stdio")
    """
)

MCP_CLIENT = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main():
        params = StdioServerParameters(command=sys.executable, args=[sys.argv[1]],
                                       cwd=sys.argv[2])
        n = int(sys.argv[3])
        out = {}
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            for name in ("plain", "sandboxed", "plain", "sandboxed"):
                await s.call_tool(name, {"text": "x"})
                start = time.perf_counter()
                for _ in range(n):
                    await s.call_tool(name, {"text": "x"})
                per_call = (time.perf_counter() - start) / n * 1000
                out[name] = min(out.get(name, per_call), per_call)
        print(json.dumps(out))

    asyncio.run(main())
    """
)


def setup(workdir: Path) -> None:
    (workdir / "partial.py-sandboxes").write_text("os-sandbox=landlock\npy-sandbox=true\n")
    (workdir / "partial_bench.py").write_text(PROGRAM)
    (workdir / "reference_bench.py").write_text(REFERENCE)
    (workdir / "reference_tools.py").write_text(REFERENCE_TOOLS)
    mcp_dir = workdir / "mcp"
    mcp_dir.mkdir()
    (mcp_dir / ".py-sandboxes").write_text("os-sandbox=landlock\n")
    (mcp_dir / "server.py").write_text(MCP_SERVER)
    (mcp_dir / "client.py").write_text(MCP_CLIENT)


def _python_start_ms(runs: int) -> float:
    import time

    times = []
    for _ in range(max(5, runs)):
        start = time.perf_counter()
        subprocess.run([PYTHON3, "-c", "pass"], check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(workdir: Path, runs: int) -> dict[str, Any]:
    """Run the measurement program; the partial results as one entry per target."""

    import sys

    proc = subprocess.run(
        [
            sys.executable,
            str(workdir / "partial_bench.py"),
            str(workdir / "partial.py-sandboxes"),
            "5000",
            str(max(5, runs // 2)),
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"partial bench failed:\n{proc.stderr[-2000:]}")
    data = json.loads(proc.stdout)
    data["python_start_ms"] = _python_start_ms(runs)
    reference = os.environ.get("BENCH_REFERENCE_PYTHON")
    if reference:
        ref = subprocess.run(
            [reference, str(workdir / "reference_bench.py"), "500"],
            cwd=workdir,
            capture_output=True,
            text=True,
            check=False,
        )
        if ref.returncode == 0:
            data.update(json.loads(ref.stdout.splitlines()[-1]))
        else:
            data["reference_error"] = ref.stderr[-300:]
    return data


_results: dict[str, Any] = {}


def _once(workdir: Path, runs: int) -> dict[str, Any]:
    if not _results:
        _results.update(measure(workdir, runs))
    return _results


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def calls(workdir: Path, runs: int) -> dict[str, Any]:
    data = _once(workdir, runs)
    rate = data["sandboxed_calls_per_s"]
    text = (
        f"{rate:,.0f} calls/s (plain call {data['plain_calls_per_s']:,.0f}/s, x"
        f"{data['plain_calls_per_s'] / rate:,.0f}; bare socketpair round trip "
        f"{data['bare_round_trips_per_s']:,.0f}/s, x{data['bare_round_trips_per_s'] / rate:.2f})"
    )
    if "reference_calls_per_s" in data:
        text += f"; reference 0.7.0 {data['reference_calls_per_s']:,.0f}/s"
    elif "reference_error" in data:
        last = data["reference_error"].strip().splitlines()[-1:] or ["?"]
        text += f"; reference 0.7.0 failed: {last[0][:120]}"
    text += f"  target >= 20,000: {_verdict(rate >= 20_000)}"
    return {
        "name": "partial: trivial sandboxed call (landlock)",
        "kind": "value",
        "value": text,
        "issue29": {"partial": (f"{rate:,.0f} calls/s", ">= 20,000/s at load 4", rate >= 20_000)},
    }


def round_trip(workdir: Path, runs: int) -> dict[str, Any]:
    ms = _once(workdir, runs)["round_trip_100kb_ms"]
    text = f"{ms:.2f} ms  target <= 2 ms: {_verdict(ms <= 2)}"
    return {"name": "partial: 100 KB argument and result", "kind": "value", "value": text}


def start_up(workdir: Path, runs: int) -> dict[str, Any]:
    data = _once(workdir, runs)
    ms, base = data["worker_start_ms"], data["python_start_ms"]
    text = (
        f"{ms:.1f} ms (python3 -c pass {base:.1f} ms, x{ms / base:.1f})  target <= 150 ms: "
        f"{_verdict(ms <= 150)}"
    )
    return {"name": "partial: worker start-up and first call", "kind": "value", "value": text}


def memory(workdir: Path, runs: int) -> dict[str, Any]:
    mb = _once(workdir, runs)["worker_rss_mb"]
    text = f"{mb:.1f} MB  target <= 30 MB: {_verdict(0 < mb <= 30)}"
    return {"name": "partial: worker resident memory", "kind": "value", "value": text}


def mcp_stdio(workdir: Path, runs: int) -> dict[str, Any]:
    """The same tool through MCP over stdio, sandboxed and not; target within x1.5."""

    import sys

    mcp_dir = workdir / "mcp"
    proc = subprocess.run(
        [
            sys.executable,
            str(mcp_dir / "client.py"),
            str(mcp_dir / "server.py"),
            str(mcp_dir),
            str(max(50, runs * 10)),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    name = "partial: MCP tool call over stdio"
    if proc.returncode != 0:
        return {"name": name, "kind": "value", "value": f"not run: {proc.stderr[-300:]}"}
    data = json.loads(proc.stdout)
    ratio = data["sandboxed"] / data["plain"]
    text = (
        f"{data['sandboxed']:.2f} ms sandboxed vs {data['plain']:.2f} ms plain, x{ratio:.2f}  "
        f"target <= x1.5: {_verdict(ratio <= 1.5)}"
    )
    return {"name": name, "kind": "value", "value": text}


CASES = [calls, round_trip, start_up, memory, mcp_stdio]
TABLE_CASES = [calls]
