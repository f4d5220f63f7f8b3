"""Partial mode with the mcp SDK (issue 13, item 8): the SDK's own client drives a real server
over stdio and streamable HTTP, with the 2.x series (dev extra) and the 1.x series (its own
venv: ``examples/mcp-server/make-mcp1-venv.sh``, then ``PYSANDBOXES_MCP1_PYTHON``)."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pysandboxes.providers import get_provider
from tests.helpers import PYTHON, REPO, base_env, require

PROGRAMS = Path(__file__).parent / "programs" / "partial_mcp"
CLIENT = PROGRAMS / "mcp_client.py"
EXAMPLE = REPO / "examples" / "mcp-server" / "server.py"
MCP1_DEFAULT = str(REPO / ".venv" / "mcp1" / "bin" / "python")  # scripts/setup.sh makes it


def _has_mcp(python: str, series: str) -> bool:
    code = "import mcp, importlib.metadata as m; print(m.version('mcp'))"
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    except OSError:
        return False
    return out.returncode == 0 and out.stdout.strip().startswith(series + ".")


@pytest.fixture(params=["2", "1"], ids=["mcp2", "mcp1"])
def sdk_python(request: pytest.FixtureRequest) -> str:
    if request.param == "2":
        require(_has_mcp(PYTHON, "2"), "the mcp SDK 2.x is not installed (pip install -e .[dev])")
        return PYTHON
    python = os.environ.get("PYSANDBOXES_MCP1_PYTHON", MCP1_DEFAULT)
    require(
        _has_mcp(python, "1"),
        f"no interpreter with the mcp SDK 1.x at {python} "
        "(examples/mcp-server/make-mcp1-venv.sh, then PYSANDBOXES_MCP1_PYTHON)",
    )
    return python


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def web_page(tmp_path: Path) -> Iterator[int]:
    """A local web server with one page; its port."""

    (tmp_path / "page.html").write_text("<p>hello from the page</p>")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield int(httpd.server_address[1])
    httpd.shutdown()


def stdio_calls(
    python: str, script: Path, env: dict[str, str], calls: list[Any], *server_args: str
) -> tuple[dict[str, Any], str]:
    proc = subprocess.run(
        [
            python,
            str(CLIENT),
            "stdio",
            str(script),
            str(script.parent),
            json.dumps(env),
            json.dumps(calls),
            *server_args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout), proc.stderr


def server_env(tmp_path: Path, provider: str, **extra: str) -> dict[str, str]:
    state = get_provider(provider).availability()
    require(state.ok, f"os-sandbox={provider}: {state.reason} ({state.install_hint})")
    return base_env(tmp_path, {"OS_SANDBOX": provider, **extra})


def test_example_server_over_stdio(sdk_python: str, tmp_path: Path, web_page: int) -> None:
    env = server_env(tmp_path, "landlock", MCP_EXAMPLE_FETCH_PORT=str(web_page))
    other = _free_port()
    calls = [
        ["calculate", {"expression": "2 * (3 + 4) ** 2"}],
        ["fetch", {"url": f"http://127.0.0.1:{web_page}/page.html"}],
        ["fetch", {"url": f"http://127.0.0.1:{other}/"}],
    ]
    result, stderr = stdio_calls(sdk_python, EXAMPLE, env, calls)
    assert result["tools"] == ["calculate", "fetch"]
    calculated, fetched, refused = result["calls"]
    assert calculated == {"error": False, "text": "98.0"}
    # The tool printed; the protocol stream stayed clean (the call above succeeded) and the
    # line went to the server's stderr.
    assert "calculate: '2 * (3 + 4) ** 2'" in stderr
    assert fetched == {"error": False, "text": "<p>hello from the page</p>"}
    # The refusal reaches the client as the tool's error, naming the line that would allow it.
    assert refused["error"] is True
    assert f"Connection to [127.0.0.1]:{other} DENIED" in refused["text"]
    assert f"net=ALLOW|TCP|127.0.0.1|{other}|OUT" in refused["text"]


@pytest.mark.parametrize("start", ["integration", "plain"])
def test_both_decorator_orders_run_in_the_sandbox(
    sdk_python: str, tmp_path: Path, start: str
) -> None:
    env = server_env(tmp_path, "subprocess")
    calls = [
        ["tool_over_sandbox", {}],
        ["sandbox_over_tool", {}],
        ["with_context", {"value": 3}],
        ["unsandboxed", {}],
    ]
    result, _ = stdio_calls(sdk_python, PROGRAMS / "mcp_orders.py", env, calls, start)
    texts = [call["text"] for call in result["calls"]]
    assert texts == [
        "sandboxed=True",
        "sandboxed=True",
        "sandboxed=True ctx=None value=3",
        "sandboxed=False",  # the control: a tool not marked runs in the server
    ]


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_example_server_over_http_transports(
    sdk_python: str, tmp_path: Path, web_page: int, transport: str
) -> None:
    env = server_env(tmp_path, "landlock", MCP_EXAMPLE_FETCH_PORT=str(web_page))
    port = _free_port()
    server = subprocess.Popen(
        [sdk_python, str(EXAMPLE), transport, str(port)],
        cwd=EXAMPLE.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        path = "/mcp" if transport == "streamable-http" else "/sse"
        calls = [
            ["calculate", {"expression": "1 + 2"}],
            ["fetch", {"url": f"http://127.0.0.1:{web_page}/page.html"}],
        ]
        proc = subprocess.run(
            [
                sdk_python,
                str(CLIENT),
                transport,
                f"http://127.0.0.1:{port}{path}",
                json.dumps(calls),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        result = json.loads(proc.stdout)
        assert result["calls"] == [
            {"error": False, "text": "3.0"},
            {"error": False, "text": "<p>hello from the page</p>"},
        ]
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=30)
    assert "calculate: '1 + 2'" in stderr
