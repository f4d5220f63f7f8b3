"""Network rules through an armed interpreter: pinning of resolved names, IN/OUT, UDP."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.helpers import loopback_host_name, require
from tests.unit.guard.harness import run_armed


def test_names_are_checked_and_pinned(tmp_path: Path) -> None:
    """A host-name rule allows the addresses the guard saw that name resolve to, no others."""

    name = loopback_host_name()
    require(name, "no host name for 127.0.0.1 in /etc/hosts besides localhost")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    code = f"""
import socket
def attempt(label, address):
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect(address)
        print(label, "connected")
    except ConnectionRefusedError as exc:
        print(label, "refused", type(exc).__name__)
    finally:
        s.close()
attempt("address before resolution", ("127.0.0.1", {port}))
print("resolved", socket.getaddrinfo({name!r}, {port}, type=socket.SOCK_STREAM)[0][4][0])
attempt("pinned address", ("127.0.0.1", {port}))
attempt("other address", ("127.0.0.2", {port}))
attempt("by name", ({name!r}, {port}))
attempt("other port", ("127.0.0.1", {port + 1 if port < 65535 else port - 1}))
"""
    try:
        result = run_armed(code, f"python-import=*\nnet=ALLOW|TCP|{name}|{port}|OUT\n", tmp_path)
    finally:
        server.close()
    assert result.lines == [
        "address before resolution refused RuleConnectionRefusedError",
        "resolved 127.0.0.1",
        "pinned address connected",
        "other address refused RuleConnectionRefusedError",
        "by name connected",
        "other port refused RuleConnectionRefusedError",
    ], result.stdout + result.stderr


def test_directions_protocols_and_shapes(tmp_path: Path) -> None:
    code = """
import socket
def show(label, action):
    try:
        action()
        print(label, "ok")
    except ConnectionRefusedError as exc:
        print(label, exc)
tcp = socket.socket()
show("bind tcp", lambda: tcp.bind(("127.0.0.1", 0)))
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
show("bind udp", lambda: udp.bind(("127.0.0.1", 0)))
show("sendto", lambda: udp.sendto(b"x", ("127.0.0.1", 9)))
udp6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
show("sendto v6", lambda: udp6.sendto(b"x", ("::1", 9)))
show("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
show("name", lambda: socket.gethostbyname("nothing-covers-this.example"))
"""
    rules = "python-import=*\nnet=ALLOW|TCP|127.0.0.1|*|IN\nnet=ALLOW|UDP|127.0.0.1|9|OUT\n"
    result = run_armed(code, rules, tmp_path)
    assert result.lines == [
        "bind tcp ok",
        "bind udp Bind to [127.0.0.1]:0 DENIED: no net= rule allows it",
        "sendto ok",
        "sendto v6 Connection to [::1]:9 DENIED: no net= rule allows it",
        "raw Creating a raw, packet or non-IP socket DENIED: the Python layer allows IPv4, IPv6 "
        "and Unix sockets only",
        "name Connection to [nothing-covers-this.example]:* DENIED: no net= rule allows it",
    ], result.stdout + result.stderr
