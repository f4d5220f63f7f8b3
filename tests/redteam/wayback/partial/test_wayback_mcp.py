"""The way back through the MCP integration (issue 25): a stdio MCP server's sandboxed tools
attack the server that runs them -- a forged traceback naming a host file and ``/dev/stdin``
(the server's own protocol pipe: reading it would block the server or eat the client's
messages), a ``CancelledError`` (it would cancel the server's task), escape sequences -- and
the SDK's own client checks that each comes back as a tool error or clean output and that the
session goes on. Under every provider; the controls of these objectives (the old traceback
formatting reading the file, the exception passing ``except Exception``, raw output) are in
``test_wayback_partial.py``, on the same host path (``Worker.acall``).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pysandboxes.providers import get_provider
from tests.helpers import PYTHON, REPO, base_env, require
from tests.redteam.wayback.partial.test_wayback_partial import PROVIDERS, SECRET_LINE

SERVER = Path(__file__).with_name("mcp_server.py")
CLIENT = REPO / "tests" / "e2e" / "programs" / "partial_mcp" / "mcp_client.py"


def _has_mcp() -> bool:
    code = "import mcp"
    return subprocess.run([PYTHON, "-c", code], capture_output=True, timeout=60).returncode == 0


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_mcp_server_holds(tmp_path: Path, provider: str) -> None:
    require(_has_mcp(), "the mcp SDK is not installed (pip install -e .[dev])")
    state = get_provider(provider).availability()
    require(state.ok, f"os-sandbox={provider}: {state.reason} ({state.install_hint})")
    rules = tmp_path / "rules.py-sandboxes"
    rules.write_text(f"learn=false\npy-sandbox=false\nos-sandbox={provider}\n")
    secret = tmp_path / "host-secret.txt"
    secret.write_text(SECRET_LINE + "\n")
    env = base_env(tmp_path, {"WAYBACK_SECRET": str(secret)})
    calls = [
        ["forged_traceback", {"secret": str(secret)}],
        ["cancelled", {}],
        ["noisy", {}],
        ["ok", {}],
    ]
    proc = subprocess.run(
        [
            PYTHON,
            str(CLIENT),
            "stdio",
            str(SERVER),
            str(tmp_path),
            json.dumps(env),
            json.dumps(calls),
            str(rules),
        ],
        capture_output=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-3000:].decode(errors="replace")
    forged, cancelled, noisy, ok = json.loads(proc.stdout)["calls"]
    assert forged["error"] is True and SECRET_LINE not in forged["text"], forged
    assert cancelled["error"] is True, cancelled
    assert noisy == {"error": False, "text": "printed"}
    assert ok == {"error": False, "text": "ok"}  # the protocol pipe was never read by the host
    assert b"noisy tool" in proc.stderr and b"\x1b]52" not in proc.stderr
