"""UDP replies belong to the IN grant (SPEC §2.4, issue 11 point 9), under the Python layer:
a socket bound under an IN rule may answer the peers it received datagrams from, nothing else;
the reception is believed only when the guard's own receive method saw it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.guard.harness import run_armed

PROLOGUE = """
import socket
def show(label, action):
    try:
        action()
        print(label, "ok")
    except ConnectionRefusedError as exc:
        print(label, "refused", type(exc).__name__)
server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
server.bind(("127.0.0.2", 0))
port = server.getsockname()[1]
client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
# Shared with SO_REUSEADDR: not the program's own server alone (test_own_server.py), so what
# reaches it from the server is judged as a reply or by the OUT rules.
client.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
client.bind(("127.0.0.1", 0))
client.settimeout(5)
"""


@pytest.mark.parametrize(
    "receive",
    [
        "data, peer = server.recvfrom(100)",
        "buf = bytearray(100); n, peer = server.recvfrom_into(buf)",
        "data, anc, flags, peer = server.recvmsg(100)",
        "buf = bytearray(100); n, anc, flags, peer = server.recvmsg_into([buf])",
    ],
    ids=["recvfrom", "recvfrom_into", "recvmsg", "recvmsg_into"],
)
def test_server_answers_its_peer_only(receive: str, tmp_path: Path) -> None:
    code = (
        PROLOGUE
        + f"""
show("reply before any datagram", lambda: server.sendto(b"early", client.getsockname()))
client.sendto(b"ping", ("127.0.0.2", port))
{receive}
show("reply", lambda: server.sendto(b"pong", peer))
print("client got", client.recvfrom(100)[0].decode())
show("reply by sendmsg", lambda: server.sendmsg([b"pong"], [], 0, peer))
show("another port of the peer", lambda: server.sendto(b"x", ("127.0.0.1", 9)))
show("connect to the peer", lambda: server.connect(peer))
"""
    )
    rules = (
        "python-import=*\nnet=ALLOW|UDP|127.0.0.2|*|IN\n"
        "net=ALLOW|UDP|127.0.0.1|*|IN\nnet=ALLOW|UDP|127.0.0.2|*|OUT\n"
    )
    result = run_armed(code, rules, tmp_path)
    assert result.lines == [
        "reply before any datagram refused RuleConnectionRefusedError",
        "reply ok",
        "client got pong",
        "reply by sendmsg ok",
        "another port of the peer refused RuleConnectionRefusedError",
        "connect to the peer ok",
    ], result.stdout + result.stderr


def test_no_in_grant_no_reply_and_deny_wins(tmp_path: Path) -> None:
    """A socket whose endpoint no IN rule grants (here: bound before the rules changed
    nothing -- an ephemeral client socket) answers nobody; a DENY rule refuses a reply too."""

    code = (
        PROLOGUE
        + """
client.sendto(b"ping", ("127.0.0.2", port))
data, peer = server.recvfrom(100)
server.sendto(b"pong", peer)
data, back = client.recvfrom(100)
show("client replies to the server", lambda: client.sendto(b"x", back))
"""
    )
    rules = (
        "python-import=*\nnet=ALLOW|UDP|127.0.0.2|*|IN\nnet=ALLOW|UDP|127.0.0.1|0|IN\n"
        "net=ALLOW|UDP|127.0.0.2|*|OUT\n"
    )
    # The client socket is bound to an ephemeral port: port 0 is what the rule grants, not the
    # port it got, so its endpoint has no IN grant; its send to the server is an OUT it has.
    result = run_armed(code, rules, tmp_path)
    assert result.lines == ["client replies to the server ok"], result.stdout + result.stderr
    denied = run_armed(
        PROLOGUE
        + """
client.sendto(b"ping", ("127.0.0.2", port))
data, peer = server.recvfrom(100)
show("reply to a denied peer", lambda: server.sendto(b"pong", peer))
""",
        rules + "net=DENY|UDP|127.0.0.1|*|OUT\n",
        tmp_path,
    )
    assert denied.lines == ["reply to a denied peer refused RuleConnectionRefusedError"], (
        denied.stdout + denied.stderr
    )
    unbound = run_armed(
        PROLOGUE
        + """
client.sendto(b"ping", ("127.0.0.2", port))
data, peer = server.recvfrom(100)
other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
show("reply from a socket with no IN grant", lambda: other.sendto(b"pong", peer))
""",
        rules,
        tmp_path,
    )
    assert unbound.lines == [
        "reply from a socket with no IN grant refused RuleConnectionRefusedError"
    ], unbound.stdout + unbound.stderr


def test_forged_receptions_grant_nothing(tmp_path: Path) -> None:
    """The program raises the guard's event itself, or makes a receive method's closure hold
    another function: the address it names is not a peer."""

    code = (
        PROLOGUE
        + """
import sys
target = ("127.0.0.1", 9)
sys.audit("pysandboxes.received", server, (b"forged", target))
show("after a forged event", lambda: server.sendto(b"x", target))
method = type(server).recvfrom
cells = [c for c in (method.__closure__ or ()) if callable(c.cell_contents)]
for cell in cells:
    if cell.cell_contents is socket._socket.socket.recvfrom:
        cell.cell_contents = lambda self, *a: (b"forged", target)
print("swapped", len(cells) > 0)
server.recvfrom(100)
show("after a swapped closure", lambda: server.sendto(b"x", target))
"""
    )
    rules = (
        "python-import=*\nnet=ALLOW|UDP|127.0.0.2|*|IN\nnet=ALLOW|UDP|127.0.0.1|0|IN\n"
        "net=ALLOW|UDP|127.0.0.2|*|OUT\n"
    )
    result = run_armed(code, rules, tmp_path)
    assert result.lines == [
        "after a forged event refused RuleConnectionRefusedError",
        "swapped True",
        "after a swapped closure refused RuleConnectionRefusedError",
    ], result.stdout + result.stderr
