"""A program's own server on loopback (issue 11 point 10, SPEC §2.4, docs/network.md), through
the real ``python-sb`` under every enforcer: a loopback connection to a port an ``IN`` rule lets
the program bind, and that a socket of the program holds, belongs to that IN grant -- no OUT
rule. Another local service (one the program did not bind) stays refused without an OUT rule.

Each case has its control: plain ``python3`` runs the same program and reaches both."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_unshare_e2e import provider_ok
from tests.helpers import base_env, require_tool, run_python, run_sb

#: Binds HOST:PORT, listens, connects to TARGET at the port it got (no thread: the kernel
#: queues the connection until accept), then tries OTHER (another local service) if given.
PROGRAM = """
import socket, sys
host, port, target = sys.argv[1], int(sys.argv[2]), sys.argv[3]
other = int(sys.argv[4]) if len(sys.argv) > 4 else None
server = socket.socket()
server.bind((host, port))
server.listen()
port = server.getsockname()[1]
client = socket.create_connection((target, port), timeout=10)
peer, _ = server.accept()
peer.sendall(b"hello")
print("own", client.recv(5).decode())
if other is not None:
    try:
        socket.create_connection(("127.0.0.1", other), timeout=10).close()
        print("other REACHED")
    except OSError as exc:
        print("other refused", type(exc).__name__)
"""

#: (provider, Python layer)
ENFORCERS = [
    ("subprocess", True),
    ("landlock", True),
    ("landlock", False),
    ("bwrap", True),
    ("bwrap", False),
    ("unshare", True),
    ("unshare", False),
]
IDS = [f"{p}-py-{'on' if on else 'off'}" for p, on in ENFORCERS]


def needs(provider: str) -> None:
    provider_ok(provider)
    if provider in ("bwrap", "unshare"):
        require_tool("pasta", "passt")
        require_tool("nft", "nftables")


def ephemeral() -> tuple[int, int]:
    low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
    return int(low), int(high)


def free_port(outside_ephemeral: bool = False) -> int:
    """A free TCP port of the host's loopback (below the ephemeral range if asked)."""

    low, high = ephemeral()
    candidates = range(20000, low) if outside_ephemeral else [0]
    for candidate in candidates:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", candidate))
            except OSError:
                continue
            port = int(sock.getsockname()[1])
            if not outside_ephemeral or not low <= port <= high:
                return port
    pytest.skip("no free port below the ephemeral range")


@pytest.fixture
def other_service() -> Iterator[int]:
    """Another local service: a listening socket of the test process on the host's loopback,
    on a port outside the ephemeral range (Landlock's announced limit: with a port-0 IN rule
    and the Python layer off, the ephemeral ports are open to connect on every host)."""

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", free_port(outside_ephemeral=True)))
        sock.listen(8)
        yield sock.getsockname()[1]


def run(
    provider: str, python_layer: bool, project: Path, home: Path, *args: str, rule: str
) -> subprocess.CompletedProcess[str]:
    (project / "own.py").write_text(PROGRAM)
    (project / ".py-sandboxes").write_text(
        f"expose-ro={project}\npython-import=socket,sys\nnet={rule}\n"
    )
    return run_sb(
        [
            f"--os-sandbox={provider}",
            f"--py-sandbox={'true' if python_layer else 'false'}",
            "own.py",
            *args,
        ],
        cwd=project,
        env=base_env(home),
    )


def bind_rule(provider: str, python_layer: bool, port: int | str) -> tuple[str, str]:
    """The IN rule and the address the program binds: Landlock alone filters by port only, so
    a loopback bind needs the Python layer there; it gets the wildcard bind instead."""

    if provider == "landlock" and not python_layer:
        return f"ALLOW|TCP|0.0.0.0/32|{port}|IN", "0.0.0.0"
    return f"ALLOW|TCP|127.0.0.1|{port}|IN", "127.0.0.1"


@pytest.mark.kernel
@pytest.mark.parametrize(("provider", "python_layer"), ENFORCERS, ids=IDS)
def test_port_0_server_reached_over_loopback_and_nothing_else(
    provider: str, python_layer: bool, project: Path, home: Path, other_service: int
) -> None:
    needs(provider)
    rule, host = bind_rule(provider, python_layer, 0)
    args = (host, "0", "127.0.0.1", str(other_service))
    (project / "own.py").write_text(PROGRAM)
    control = run_python(["own.py", *args], cwd=project, env=base_env(home))
    assert control.stdout == "own hello\nother REACHED\n", control.stderr
    result = run(provider, python_layer, project, home, *args, rule=rule)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "own hello", result.stderr
    if python_layer:
        expected = "RuleConnectionRefusedError"  # the Python layer refuses it first
    elif provider == "landlock":
        expected = "PermissionError"  # no connect rule for that port
    else:
        expected = "ConnectionRefusedError"  # the sandbox's loopback has no such service
    assert lines[1:] == [f"other refused {expected}"], result.stderr


@pytest.mark.kernel
@pytest.mark.parametrize(("provider", "python_layer"), ENFORCERS, ids=IDS)
def test_fixed_port_server_with_an_out_rule_to_it(
    provider: str, python_layer: bool, project: Path, home: Path
) -> None:
    """A fixed port, reached by the name ``localhost``, with an OUT rule to the loopback on
    the same port as well (what earlier learning wrote): the namespace providers must not let
    pasta take the port from the program (``-T``), and the program's bind succeeds."""

    needs(provider)
    port = free_port()
    rule, host = bind_rule(provider, python_layer, port)
    args = (host, str(port), "localhost")
    (project / "own.py").write_text(PROGRAM)
    control = run_python(["own.py", *args], cwd=project, env=base_env(home))
    assert control.stdout == "own hello\n", control.stderr
    result = run(provider, python_layer, project, home, *args, rule=rule)
    assert result.stdout == "own hello\n", result.stderr
    if provider in ("bwrap", "unshare"):
        both = f"{rule}\nnet=ALLOW|TCP|127.0.0.1|{port}|OUT"
        result = run(provider, python_layer, project, home, *args, rule=both)
        assert result.stdout == "own hello\n", result.stderr
        assert "are not forwarded into the sandbox" in result.stderr
