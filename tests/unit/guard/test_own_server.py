"""A program's own server (issue 11 point 10, SPEC §2.4, docs/network.md): under the Python
layer, a loopback connection to a port a socket of the program holds alone, bound under an IN
rule, belongs to that IN grant; anything else on the loopback still needs an OUT rule, and a
DENY still wins. :func:`pysandboxes.policy.decide.net_decision` says the same."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from pysandboxes.policy import parse_text
from pysandboxes.policy.decide import net_decision
from tests.unit.guard.harness import run_armed

SHOW = """
import socket
def show(label, action):
    try:
        action()
        print(label, "ok")
    except OSError as exc:
        import pysandboxes
        kinds = [d.kind for d in pysandboxes.sandbox_denials(exc)]
        print(label, type(exc).__name__, kinds)
"""

SERVER = """
server = socket.socket(socket.AF_INET6 if ":" in BIND else socket.AF_INET)
server.bind((BIND, PORT))
server.listen()
port = server.getsockname()[1]
"""


@pytest.fixture
def other_service() -> Iterator[int]:
    """A listening loopback socket of the test process: another local service."""

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def server(bind: str = "127.0.0.1", port: int = 0) -> str:
    return SHOW + SERVER.replace("BIND", repr(bind)).replace("PORT", str(port))


def test_a_connection_to_the_own_port_0_server_is_allowed(tmp_path: Path) -> None:
    code = server() + (
        'show("127.0.0.1", lambda: socket.create_connection(("127.0.0.1", port)).close())\n'
        'show("localhost", lambda: socket.create_connection(("localhost", port)).close())\n'
        'show("0.0.0.0", lambda: socket.socket().connect(("0.0.0.0", port)))\n'
        'show("twice", lambda: socket.create_connection(("127.0.0.1", port)).close())\n'
    )
    denials = tmp_path / "denials.jsonl"
    result = run_armed(
        code, "python-import=*\nnet=ALLOW|TCP|127.0.0.1|0|IN\n", tmp_path, denials_file=denials
    )
    assert result.lines == ["127.0.0.1 ok", "localhost ok", "0.0.0.0 ok", "twice ok"], result
    assert not denials.exists()


def test_a_fixed_port_server_on_the_wildcard_is_reached_on_loopback(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = server("0.0.0.0", port) + (
        'show("own", lambda: socket.create_connection(("127.0.0.1", port)).close())\n'
        'show("another port", lambda: socket.socket().connect(("127.0.0.1", port + 1)))\n'
    )
    result = run_armed(code, f"python-import=*\nnet=ALLOW|TCP|0.0.0.0/32|{port}|IN\n", tmp_path)
    assert result.lines == [
        "own ok",
        "another port RuleConnectionRefusedError ['net']",
    ], result


def test_another_local_service_is_still_refused(tmp_path: Path, other_service: int) -> None:
    """The attack: a loopback service the program did not bind stays out of reach, even
    while the program holds a server of its own; the control reaches it without the guard."""

    with socket.create_connection(("127.0.0.1", other_service), timeout=5):
        pass  # control: the service is there
    code = server() + (
        f'show("other", lambda: socket.create_connection(("127.0.0.1", {other_service})))\n'
    )
    result = run_armed(code, "python-import=*\nnet=ALLOW|TCP|127.0.0.1|0|IN\n", tmp_path)
    assert result.lines == ["other RuleConnectionRefusedError ['net']"], result


def test_a_deny_still_wins(tmp_path: Path) -> None:
    code = server() + 'show("own", lambda: socket.create_connection(("127.0.0.1", port)))\n'
    rules = "python-import=*\nnet=ALLOW|TCP|127.0.0.1|0|IN\nnet=DENY|TCP|127.0.0.1|*|OUT\n"
    result = run_armed(code, rules, tmp_path)
    assert result.lines == ["own RuleConnectionRefusedError ['net']"], result


@pytest.mark.parametrize(
    "setup",
    [
        "server.close()",
        # Not listening: the port is not the program's server.
        "server = socket.socket(); server.bind(('127.0.0.1', 0)); port = server.getsockname()[1]",
        # SO_REUSEPORT: another socket (of the same user) may hold the same port.
        "server = socket.socket(); "
        "server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1); "
        "server.bind(('127.0.0.1', 0)); server.listen(); port = server.getsockname()[1]",
        # Listened on without a bind, through the C method: never judged, never counted.
        "import _socket; server = socket.socket(); _socket.socket.listen(server); "
        "port = server.getsockname()[1]",
    ],
    ids=["closed", "not-listening", "reuseport", "unjudged-listen"],
)
def test_only_a_socket_that_holds_the_port_alone_counts(setup: str, tmp_path: Path) -> None:
    code = (
        server()
        + setup
        + "\n"
        + 'show("own", lambda: socket.socket().connect(("127.0.0.1", port)))\n'
    )
    rules = "python-import=*\nnet=ALLOW|TCP|127.0.0.1|0|IN\nnet=ALLOW|TCP|0.0.0.0/32|0|IN\n"
    result = run_armed(code, rules, tmp_path)
    assert result.lines == ["own RuleConnectionRefusedError ['net']"], result


def test_the_other_loopback_address_is_refused_as_the_kernel_would(tmp_path: Path) -> None:
    """``localhost`` names 127.0.0.1 and ::1: a client tries both. The address the server does
    not hold is refused with a plain ECONNREFUSED and no denial, as nothing listens there."""

    code = server("::1") + (
        'show("v4", lambda: socket.socket().connect(("127.0.0.1", port)))\n'
        'show("v6", lambda: socket.socket(socket.AF_INET6).connect(("::1", port)))\n'
    )
    denials = tmp_path / "denials.jsonl"
    rules = "python-import=*\nnet=ALLOW|TCP|::1|0|IN\n"
    result = run_armed(code, rules, tmp_path, denials_file=denials)
    assert result.lines == ["v4 ConnectionRefusedError []", "v6 ok"], result
    assert not denials.exists()


def test_udp_to_the_own_socket(tmp_path: Path) -> None:
    code = SHOW + (
        "server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "server.bind(('127.0.0.1', 0))\n"
        "port = server.getsockname()[1]\n"
        "client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        'show("own", lambda: client.sendto(b"x", ("127.0.0.1", port)))\n'
        "print(server.recvfrom(10)[0].decode())\n"
        "shared = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "shared.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        "shared.bind(('127.0.0.1', 0))\n"
        'show("shared", lambda: client.sendto(b"x", ("127.0.0.1", shared.getsockname()[1])))\n'
    )
    result = run_armed(code, "python-import=*\nnet=ALLOW|UDP|127.0.0.1|0|IN\n", tmp_path)
    assert result.lines == ["own ok", "x", "shared RuleConnectionRefusedError ['net']"], result


def test_learning_records_the_bind_alone(tmp_path: Path) -> None:
    code = server() + 'show("own", lambda: socket.create_connection(("127.0.0.1", port)))\n'
    result = run_armed(code, "python-import=*\n", tmp_path, mode="learn")
    assert result.lines == ["own ok"], result
    nets = [r for r in result.records if r.get("kind") == "net"]
    assert [(r["ip"], r["port"], r["dir"]) for r in nets] == [("127.0.0.1", 0, "IN")], nets


POLICY = (
    "net=ALLOW|TCP|127.0.0.1|0|IN\nnet=ALLOW|TCP|0.0.0.0/32|8000|IN\nnet=ALLOW|TCP|::/128|8000|IN\n"
    "net=DENY|TCP|127.0.0.1|9000|OUT\nnet=ALLOW|TCP|0.0.0.0/32|9000|IN\n"
)


@pytest.mark.parametrize(
    ("own", "ip", "port", "expected"),
    [
        ([("TCP", "127.0.0.1", 40000)], "127.0.0.1", 40000, True),
        ([("TCP", "127.0.0.1", 40000)], "0.0.0.0", 40000, True),
        ([("TCP", "127.0.0.1", 40000)], "127.0.0.1", 40001, False),
        ([("UDP", "127.0.0.1", 40000)], "127.0.0.1", 40000, False),  # no UDP IN rule
        ([("TCP", "127.0.0.1", 40000)], "::1", 40000, False),
        ([("TCP", "127.0.0.2", 40000)], "127.0.0.2", 40000, False),  # not an IN grant
        ([("TCP", "0.0.0.0", 8000)], "127.0.0.1", 8000, True),
        ([("TCP", "0.0.0.0", 8000)], "10.0.0.1", 8000, False),  # loopback only
        ([("TCP", "0.0.0.0", 9000)], "127.0.0.1", 9000, False),  # the DENY wins
        ([], "127.0.0.1", 40000, False),
        ([("TCP", "::", 8000)], "127.0.0.1", 8000, False),  # IPV6_V6ONLY: IPv6 only
        ([("TCP", "::", 8000, True)], "127.0.0.1", 8000, True),  # dual-stack
        ([("TCP", "::", 8000)], "::1", 8000, True),
    ],
)
def test_net_decision_says_the_same(
    own: list[tuple[str, str, int] | tuple[str, str, int, bool]], ip: str, port: int, expected: bool
) -> None:
    policy = parse_text(POLICY, "/x/.py-sandboxes")
    assert net_decision(policy, "TCP", None, ip, port, "OUT", own)[0] is expected


def test_net_decision_names_the_in_rule() -> None:
    policy = parse_text(POLICY, "/x/.py-sandboxes")
    allowed, rule = net_decision(
        policy, "TCP", None, "127.0.0.1", 40000, "OUT", [("TCP", "127.0.0.1", 40000)]
    )
    assert allowed and rule is not None and rule.text == "net=ALLOW|TCP|127.0.0.1|0|IN"
    assert json.dumps(rule.text)


def test_a_dual_stack_server_is_reached_over_ipv4_loopback_a_v6_only_one_is_not(
    tmp_path: Path,
) -> None:
    code = SHOW + (
        "for v6only in (0, 1):\n"
        "    server = socket.socket(socket.AF_INET6)\n"
        "    server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, v6only)\n"
        "    server.bind(('::', 0))\n"
        "    server.listen()\n"
        "    port = server.getsockname()[1]\n"
        "    show(f'v6only={v6only} v4', lambda: socket.create_connection(('127.0.0.1', port)))\n"
        "    show(f'v6only={v6only} v6', lambda: socket.create_connection(('::1', port)))\n"
        "    server.close()\n"
    )
    result = run_armed(code, "python-import=*\nnet=ALLOW|TCP|::/128|0|IN\n", tmp_path)
    assert result.lines == [
        "v6only=0 v4 ok",
        "v6only=0 v6 ok",
        "v6only=1 v4 ConnectionRefusedError []",  # nothing of the program's holds it
        "v6only=1 v6 ok",
    ], result
