"""The seed's MCP scenario, end to end with the mcp SDK's own client over stdio: the example
server (examples/mcp-server) run whole under python-sb -- its rules learned once, reviewed,
then enforced -- and then in partial mode, where only its tools run in the sandbox.

In both, a tool steered towards a host its rules do not grant is refused, and nothing reaches
that host (a listening socket the test watches). The page the tool fetches is a local stand-in
for the web (the scenario needs a network; the rules name its loopback port)."""

from __future__ import annotations

import http.server
import json
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.providers import get_provider
from tests.helpers import PYTHON, PYTHON_SB, REPO, base_env, require, run_sb

CLIENT = Path(__file__).resolve().parent / "programs" / "mcp_client.py"
EXAMPLE = REPO / "examples" / "mcp-server"


@pytest.fixture
def web_page() -> Iterator[int]:
    """The stand-in for a web page: a local HTTP server; its port."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<p>the page</p>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


class Watched:
    """A host the rules do not grant: a listening socket that records every connection."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0)
        self.port = int(self.sock.getsockname()[1])

    def reached(self) -> bool:
        try:
            conn, _ = self.sock.accept()
        except BlockingIOError:
            return False
        conn.close()
        return True


def client(work: Path, env: dict[str, str], calls: list[Any], *command: str) -> dict[str, Any]:
    done = subprocess.run(
        [PYTHON, str(CLIENT), str(work), json.dumps(env), json.dumps(calls), *command],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def landlock_available() -> bool:
    try:
        return bool(get_provider("landlock").availability())
    except ConfigError:
        return False


def test_the_mcp_server_whole_then_partial(tmp_path: Path, home: Path, web_page: int) -> None:
    require(landlock_available(), "os-sandbox=landlock cannot run on this machine")
    work = tmp_path / "server"
    work.mkdir()
    shutil.copy(EXAMPLE / "server.py", work / "server.py")
    shutil.copy(EXAMPLE / ".py-sandboxes", work / ".py-sandboxes")
    page = f"http://127.0.0.1:{web_page}/page.html"
    watched = Watched()
    steered = f"http://127.0.0.1:{watched.port}/"
    calls = [["calculate", {"expression": "2 * (3 + 4) ** 2"}], ["fetch", {"url": page}]]
    env = base_env(home)

    # 1. Complete mode: learn the whole server's rules once, driven by the client.
    learned = client(work, env, calls, PYTHON_SB, "--learn=whole.py-sandboxes", "server.py")
    assert learned["tools"] == ["calculate", "fetch"]
    assert learned["calls"] == [
        {"error": False, "text": "98.0"},
        {"error": False, "text": "<p>the page</p>"},
    ]
    rules = (work / "whole.py-sandboxes").read_text()
    assert f"net=ALLOW|TCP|127.0.0.1|{web_page}|OUT" in rules.splitlines()

    # 2. Review what the learned file grants, as a reviewer would before shipping it.
    review = run_sb(["--review", "/dev/null", "whole.py-sandboxes"], cwd=work, env=env)
    assert review.returncode == 1  # high-risk rights added: a human must look
    assert f"+ net=ALLOW|TCP|127.0.0.1|{web_page}|OUT" in review.stdout

    # 3. Enforced, under Landlock: the same calls work; a steered fetch is refused.
    enforced = client(
        work,
        {**env, "OS_SANDBOX": "landlock"},
        [*calls, ["fetch", {"url": steered}]],
        PYTHON_SB,
        "--pysandboxes-config=whole.py-sandboxes",
        "server.py",
    )
    assert enforced["calls"][:2] == learned["calls"]
    assert enforced["calls"][2]["error"] is True
    assert not watched.reached()

    # 4. Partial mode: the server in plain python, its tools in the sandbox of .py-sandboxes.
    partial = client(
        work,
        {**env, "OS_SANDBOX": "landlock", "MCP_EXAMPLE_FETCH_PORT": str(web_page)},
        [*calls, ["fetch", {"url": steered}]],
        PYTHON,
        "server.py",
    )
    assert partial["calls"][:2] == learned["calls"]
    refused = partial["calls"][2]
    assert refused["error"] is True
    assert f"Connection to [127.0.0.1]:{watched.port} DENIED" in refused["text"]
    assert f"net=ALLOW|TCP|127.0.0.1|{watched.port}|OUT" in refused["text"]
    assert not watched.reached()
    watched.sock.close()
