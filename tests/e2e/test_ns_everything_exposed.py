"""bwrap and unshare under a rule file that grants everything (issue 27, cause 10).

CPython's regression tests (tests/cpython) run under ``expose-ro=/`` and
``net=ALLOW|*|*|*|*``. Under the namespace providers that showed three differences: the host's
``/dev``, bound over the sandbox's own, is ``nodev`` there (``/dev/null`` cannot be opened:
``subprocess.DEVNULL`` breaks); the host's ``/proc`` showed every process of the host, which the
sandbox's PID namespace is meant to hide; and ``net=ALLOW|*|*|*|*`` was refused ("name the
ports"). The same program runs with plain python as the control.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import base_env, require, run_python, run_sb

PROGRAM = """
import os, subprocess, sys
with open("/dev/null", "w") as sink:
    sink.write("x")
print("devnull ok")
done = subprocess.run([sys.executable, "-c", "pass"], stdout=subprocess.DEVNULL, check=True)
print("DEVNULL ok", done.returncode)
pids = [name for name in os.listdir("/proc") if name.isdigit()]
print("own processes only", all(int(p) < 100 for p in pids) or os.getpid() > 100)
"""

SERVER = """
import socket, threading
server = socket.socket()
server.bind(("0.0.0.0", 0))  # any port: every one is granted
server.listen()
def serve():
    peer, _ = server.accept()
    peer.sendall(b"hello")
    peer.close()
threading.Thread(target=serve).start()
with socket.create_connection(("127.0.0.1", server.getsockname()[1]), timeout=30) as conn:
    print(conn.recv(10).decode())
"""


def _provider(name: str) -> None:
    from pysandboxes.providers import get_provider

    state = get_provider(name).availability()
    require(state.ok, f"os-sandbox={name}: {state.reason} ({state.install_hint})")


def _rules(project: Path, provider: str, net: bool = False) -> Path:
    rules = project / ".py-sandboxes"
    lines = [
        f"os-sandbox={provider}",
        "python-import=*",
        "python-api=ALLOW:*",
        "expose-ro=/",
        f"expose-rw={project}",
    ]
    if net:
        lines.append("net=ALLOW|*|*|*|*")
    rules.write_text("\n".join(lines) + "\n")
    return rules


@pytest.mark.kernel
@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_devices_and_processes_are_the_sandbox_own(provider: str, tmp_path: Path) -> None:
    _provider(provider)
    project = tmp_path / "project"
    project.mkdir()
    (project / "prog.py").write_text(PROGRAM)
    rules = _rules(project, provider)
    env = base_env(tmp_path / "home")
    control = run_python(["prog.py"], cwd=project, env=env)
    assert control.returncode == 0, control.stderr
    result = run_sb([f"--pysandboxes-config={rules}", "prog.py"], cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "devnull ok",
        "DEVNULL ok 0",
        "own processes only True",
    ], result.stdout + result.stderr


@pytest.mark.kernel
@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_every_port_granted_starts_and_serves_the_sandbox(provider: str, tmp_path: Path) -> None:
    """``net=ALLOW|*|*|*|*`` starts (it was refused): the program binds any port and reaches
    it; python-sb says at start that pasta forwards none of them from the host."""

    _provider(provider)
    project = tmp_path / "project"
    project.mkdir()
    (project / "server.py").write_text(SERVER)
    rules = _rules(project, provider, net=True)
    env = base_env(tmp_path / "home")
    control = run_python(["server.py"], cwd=project, env=env)
    assert control.stdout == "hello\n", control.stderr
    result = run_sb([f"--pysandboxes-config={rules}", "server.py"], cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello\n", result.stderr
    assert "pasta forwards none of them from the host" in result.stderr
