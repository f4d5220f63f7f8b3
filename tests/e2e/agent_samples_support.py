"""What every agent-framework sample test shares (issue 15): a local web server standing for
'the web' (granted by the fetch rules through ``AGENTS_WEB_PORT``) and another standing for an
intranet service (not granted), the partial-mode context the tools run in, and the checks every
framework must pass. A framework's test module supplies a *driver*: a function that sends
scripted tool calls through the framework's own tool-calling API (a scripted or test model, no
LLM) and returns what the model would read back, as :class:`Outcome` values."""

from __future__ import annotations

import contextlib
import http.server
import importlib.util
import json
import os
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

from pysandboxes import is_in_sandbox
from pysandboxes.providers import get_provider
from tests.helpers import REPO, require

SAMPLES = REPO / "examples" / "agents"
PAGE = "<p>hello from the granted web</p>"
SLOW_SECONDS = 8.0
# The tools' timeouts are read when sandboxed_tools is imported: short ones for the tests.
os.environ.setdefault("AGENTS_FETCH_TIMEOUT", "2")
os.environ.setdefault("AGENTS_CALCULATOR_TIMEOUT", "5")
sys.path.insert(0, str(SAMPLES / "common"))


@dataclass
class Outcome:
    """What the model reads for one tool call: an error text, or the tool's result."""

    error: bool
    text: str

    def result(self) -> dict[str, Any]:
        assert not self.error, self.text
        value = json.loads(self.text) if isinstance(self.text, str) else self.text
        assert isinstance(value, dict), value
        return value


Driver = Callable[[list[tuple[str, dict[str, Any]]]], list[Outcome]]


def load_sample(framework: str, package: str) -> ModuleType:
    """Import ``examples/agents/<framework>/agent.py`` (skipped when ``package`` is missing)."""

    try:
        found = importlib.util.find_spec(package) is not None
    except ModuleNotFoundError:  # a dotted name whose parent package is missing
        found = False
    require(found, f"{package} is not installed (pip install -e .[agents], or scripts/setup.sh)")
    path = SAMPLES / framework / "agent.py"
    spec = importlib.util.spec_from_file_location(f"agent_sample_{framework}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _serve(handler: type[http.server.BaseHTTPRequestHandler]) -> http.server.ThreadingHTTPServer:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    # The slow page's client is killed with its worker: no broken-pipe trace on stderr.
    httpd.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


class _Web(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/slow":
            time.sleep(SLOW_SECONDS)
        body = (PAGE if self.path != "/intranet" else "intranet secrets").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@dataclass
class Web:
    port: int
    intranet_port: int


@contextlib.contextmanager
def serving() -> Iterator[Web]:
    """The granted web server and an intranet one; ``AGENTS_WEB_PORT`` and ``OS_SANDBOX``
    (landlock) set in this process's environment while they run."""

    state = get_provider("landlock").availability()
    require(state.ok, f"os-sandbox=landlock: {state.reason} ({state.install_hint})")
    granted, intranet = _serve(_Web), _serve(_Web)
    saved = {k: os.environ.get(k) for k in ("AGENTS_WEB_PORT", "OS_SANDBOX")}
    os.environ["AGENTS_WEB_PORT"] = str(granted.server_address[1])
    os.environ["OS_SANDBOX"] = "landlock"
    try:
        yield Web(int(granted.server_address[1]), int(intranet.server_address[1]))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        granted.shutdown()
        intranet.shutdown()


@pytest.fixture(scope="module")
def web() -> Iterator[Web]:
    """The web servers, and the tools' context (landlock) in this process."""

    with serving() as servers:
        import sandboxed_tools

        with sandboxed_tools.tool_sandboxes():
            yield servers


@pytest.fixture(scope="module")
def web_servers() -> Iterator[Web]:
    """The web servers only: for a sample driven in its own interpreter (its own venv)."""

    with serving() as servers:
        yield servers


# -- the checks every framework passes ------------------------------------------------------


def check_normal_calls(drive: Driver, web: Web) -> None:
    """Both tools answer, and both ran in the sandbox (``is_in_sandbox()`` in the body)."""

    fetched, evaluated = drive(
        [
            ("fetch_webpage", {"url": f"http://127.0.0.1:{web.port}/page"}),
            ("evaluate_expression", {"expr": "2 * (3 + 4) ** 2 + sqrt(16)"}),
        ]
    )
    page, value = fetched.result(), evaluated.result()
    assert page["text"] == PAGE and page["status"] == 200
    assert value["value"] == 102.0
    # No tool ran in the agent's process: both bodies saw the sandbox; this process does not.
    assert page["sandboxed"] is True and value["sandboxed"] is True
    assert not is_in_sandbox()


def check_refused_hosts(drive: Driver, web: Web) -> None:
    """Injected URLs to localhost on another port, the intranet and the metadata address are
    refused; the model reads the rule (or the missing one) as the tool's error."""

    # Control: the intranet service answers this (unsandboxed) process.
    with urllib.request.urlopen(f"http://localhost:{web.intranet_port}/intranet") as response:
        assert response.read() == b"intranet secrets"
    other, intranet, metadata = drive(
        [
            ("fetch_webpage", {"url": f"http://localhost:{web.intranet_port}/intranet"}),
            ("fetch_webpage", {"url": "http://10.0.0.5/"}),
            ("fetch_webpage", {"url": "http://169.254.169.254/latest/meta-data/"}),
        ]
    )
    assert other.error and "intranet secrets" not in other.text
    assert f":{web.intranet_port} DENIED" in other.text
    assert f"net=ALLOW|TCP|127.0.0.1|{web.intranet_port}|OUT" in other.text  # the fix
    # Refused by the Python layer (a direct connection) or, where the tool's HTTP client goes
    # through the edge proxy that a host-name rule starts (issue 32: landlock with the Python
    # layer on, the proxy variables), by the proxy: either way the rule and its line are named.
    assert intranet.error and "'net=DENY|*|10.0.0.0/8|*|OUT'" in intranet.text
    assert "intranet secrets" not in intranet.text
    assert metadata.error
    assert "'net=DENY|*|169.254.0.0/16|*|OUT'" in metadata.text
    assert "fetch.py-sandboxes(" in metadata.text  # where the rule is


def check_refused_evaluations(drive: Driver, web: Web) -> None:
    """An injected import is refused before it runs, CPU and memory bombs are stopped, and the
    tools keep answering."""

    imported, cpu, memory, after = drive(
        [
            ("evaluate_expression", {"expr": "__import__('os').system('id')"}),
            ("evaluate_expression", {"expr": "sum(range(10 ** 12))"}),
            ("evaluate_expression", {"expr": "9 ** 9 ** 9"}),
            ("evaluate_expression", {"expr": "1 + 1"}),
        ]
    )
    assert imported.error and "EvalSyntaxRejected" in imported.text
    assert "__import__ cannot be granted" in imported.text
    assert cpu.error and "EvalTimeout" in cpu.text
    assert memory.error and "EvalMemoryError" in memory.text
    assert after.result() == {"sandboxed": True, "value": 2}


def check_timeout(drive: Driver, web: Web) -> None:
    """A tool call past its timeout is stopped (its worker killed), the model reads the
    timeout, and the next call gets a new worker."""

    slow, after = drive(
        [
            ("fetch_webpage", {"url": f"http://127.0.0.1:{web.port}/slow"}),
            ("fetch_webpage", {"url": f"http://127.0.0.1:{web.port}/page"}),
        ]
    )
    assert slow.error and "CallTimeoutError" in slow.text, slow.text
    assert after.result()["text"] == PAGE
