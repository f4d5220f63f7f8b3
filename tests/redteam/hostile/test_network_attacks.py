"""Attacks on the kernel-enforced ``net=`` rules of the network-namespace providers.

``bwrap`` and ``unshare`` give the sandbox its own network namespace, reached from outside only
through pasta and an nftables ruleset built from the rules. Each attack is a small program (in
:data:`PROGRAMS`) run by the real ``python-sb`` with the Python layer off, so any refusal comes
from the kernel side; each has its control (the same program reaching its objective when run by
plain python, or in the sandbox with the rule that grants it). Only loopback addresses and the
sandbox's own are used as targets.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from pysandboxes.providers import get_provider
from tests.helpers import base_env, require, run_python, run_sb
from tests.redteam.hostile.harness import Listener

NETNS_PROVIDERS = ["bwrap", "unshare"]

PROGRAMS = {
    # UDP to a host port: the same number as a TCP port a rule grants (TCP only).
    "udp_send.py": """
import errno, json, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(("127.0.0.1", int(sys.argv[1])))
s.settimeout(3)
try:
    s.send(b"exfiltrated")
    reply = s.recv(100)
    print(json.dumps({"reached": reply == b"ack", "errno": None}))
except OSError as exc:
    print(json.dumps({"reached": False, "errno": errno.errorcode.get(exc.errno)}))
""",
    # A DNS query to a resolver that is not the one the sandbox is given.
    "dns_other.py": """
import errno, json, socket, struct, sys
query = struct.pack(">HHHHHH", 0x5053, 0x0100, 1, 0, 0, 0)
for label in ("exfil-data", "example", "test"):
    query += bytes([len(label)]) + label.encode()
query += b"\\0" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect((sys.argv[1], int(sys.argv[2])))
s.settimeout(3)
resolv = open("/etc/resolv.conf").read() if len(sys.argv) > 3 else ""
try:
    s.send(query)
    reply = s.recv(512)
    print(json.dumps({"reached": reply[:2] == query[:2], "errno": None, "resolv": resolv}))
except OSError as exc:
    print(json.dumps({"reached": False, "errno": errno.errorcode.get(exc.errno), "resolv": resolv}))
""",
    # Read a file that an ignore= rule hides, by name and through a listing.
    "read_ignored.py": """
import errno, json, os, sys
folder, name = os.path.split(sys.argv[1])
listed = name in os.listdir(folder)
try:
    text = open(sys.argv[1]).read()
    print(json.dumps({"reached": "TOKEN" in text, "errno": None, "listed": listed}))
except OSError as exc:
    print(json.dumps({"reached": False, "errno": errno.errorcode.get(exc.errno), "listed": listed}))
""",
    # Connect to a host loopback port, over IPv4 and IPv6 loopback.
    "tcp_connect.py": """
import errno, json, socket, sys
results = {}
for host in ("127.0.0.1", "::1", "localhost"):
    try:
        with socket.create_connection((host, int(sys.argv[1])), timeout=3) as c:
            results[host] = c.recv(20).decode()
    except OSError as exc:
        results[host] = errno.errorcode.get(exc.errno, str(exc))
reached = any(v == sys.argv[2] for v in results.values())
print(json.dumps({"reached": reached, "errno": None if reached else results["127.0.0.1"],
                  "all": results}))
""",
}


def verdict(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no verdict (exit {proc.returncode}): {proc.stdout}\n{proc.stderr}"
    data: dict[str, Any] = json.loads(lines[-1])
    return data


class UdpServer:
    """A host UDP socket on loopback that answers ``ack`` (or echoes DNS ids); records what
    arrived."""

    def __init__(self, port: int = 0, dns: bool = False) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", port))
        self.sock.settimeout(0.2)
        self.dns = dns
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                data, peer = self.sock.recvfrom(512)
            except (TimeoutError, OSError):
                continue
            self.received.append(data)
            reply = data[:2] + b"\x81\x80" + data[4:] if self.dns else b"ack"
            self.sock.sendto(reply, peer)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


def tcp_server(banner: str) -> Listener:
    """A loopback TCP server on a free port that greets every client with ``banner``."""

    return Listener(socket.AF_INET, ("127.0.0.1", 0), banner)


@pytest.fixture(params=NETNS_PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    state = get_provider(name).availability()
    require(state.ok, f"os-sandbox={name} cannot run here: {state.reason} ({state.install_hint})")
    return name


@pytest.fixture
def programs(tmp_path: Path) -> Path:
    folder = tmp_path / "programs"
    folder.mkdir()
    for name, text in PROGRAMS.items():
        (folder / name).write_text(text)
    return folder


def sandboxed(
    provider: str, programs: Path, home: Path, rules: list[str], program: str, *args: str
) -> dict[str, Any]:
    rules_file = programs.parent / "net.py-sandboxes"
    rules_file.write_text("\n".join([f"expose-ro={programs}", *rules, ""]))
    proc = run_sb(
        [
            f"--pysandboxes-config={rules_file}",
            f"--os-sandbox={provider}",
            "--py-sandbox=false",
            str(programs / program),
            *args,
        ],
        cwd=programs,
        env=base_env(home),
        timeout=120,
    )
    return verdict(proc)


def control(programs: Path, home: Path, program: str, *args: str) -> dict[str, Any]:
    return verdict(run_python([str(programs / program), *args], cwd=programs, env=base_env(home)))


@pytest.mark.kernel
def test_udp_to_a_host_port_only_tcp_is_granted_for(
    provider: str, programs: Path, home: Path
) -> None:
    tcp = tcp_server("granted")
    udp = UdpServer(port=tcp.port)  # same number, other protocol
    try:
        rules = [f"net=ALLOW|TCP|127.0.0.1|{tcp.port}|OUT"]
        got = sandboxed(provider, programs, home, rules, "udp_send.py", str(udp.port))
        assert not got["reached"] and udp.received == []
        # Nothing listens on the sandbox's own 127.0.0.1 for UDP: the kernel says so.
        assert got["errno"] == "ECONNREFUSED", got
        # In-sandbox control: the TCP rule itself works (the network is up, pasta forwards).
        ok = sandboxed(provider, programs, home, rules, "tcp_connect.py", str(tcp.port), "granted")
        assert ok["reached"], ok
        # Control: without the sandbox the datagram arrives.
        assert control(programs, home, "udp_send.py", str(udp.port))["reached"]
        assert udp.received == [b"exfiltrated"]
    finally:
        udp.close()
        tcp.close()


@pytest.mark.kernel
def test_dns_to_a_resolver_other_than_the_given_one(
    provider: str, programs: Path, home: Path
) -> None:
    try:
        fake = UdpServer(port=53, dns=True)
    except OSError as exc:
        require(False, f"cannot bind the host's 127.0.0.1:53 for a fake resolver: {exc}")
        raise
    try:
        # Even a rule naming that resolver does not make it one: DNS goes to the given one only.
        rules = ["net=ALLOW|UDP|127.0.0.1|53|OUT", "net=ALLOW|TCP|*|443|OUT"]
        got = sandboxed(provider, programs, home, rules, "dns_other.py", "127.0.0.1", "53", "r")
        assert not got["reached"] and fake.received == []
        assert got["errno"] == "ECONNREFUSED", got  # nothing is forwarded to the host's port 53
        assert got["resolv"].split() == ["nameserver", "169.254.0.53"]
        assert control(programs, home, "dns_other.py", "127.0.0.1", "53")["reached"]
        assert len(fake.received) == 1
    finally:
        fake.close()


@pytest.mark.kernel
def test_reading_an_ignored_file(provider: str, programs: Path, home: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    secret = data / "credentials.pem"
    secret.write_text("TOKEN=1")
    (data / "public.txt").write_text("public")
    rules = [f"expose-rw={data}", "ignore=*.pem", "net=ALLOW|TCP|127.0.0.1|9|OUT"]
    got = sandboxed(provider, programs, home, rules, "read_ignored.py", str(secret))
    assert not got["reached"] and got["errno"] == "ENOENT" and got["listed"] is False
    # Controls: the same rules without ignore= let it read; plain python too.
    rules_without = [r for r in rules if not r.startswith("ignore=")]
    assert sandboxed(provider, programs, home, rules_without, "read_ignored.py", str(secret))[
        "reached"
    ]
    assert control(programs, home, "read_ignored.py", str(secret))["reached"]


@pytest.mark.kernel
def test_host_loopback_port_no_rule_grants(provider: str, programs: Path, home: Path) -> None:
    granted = tcp_server("granted")
    other = tcp_server("forbidden")
    try:
        rules = [
            f"net=ALLOW|TCP|127.0.0.1|{granted.port}|OUT",
            f"net=ALLOW|TCP|127.0.0.1|{other.port}|OUT",
            # DENY wins over the ALLOW just above, whatever the order.
            f"net=DENY|*|127.0.0.0/8|{other.port}|OUT",
        ]
        got = sandboxed(provider, programs, home, rules, "tcp_connect.py", str(other.port), "x")
        assert not got["reached"], got
        assert got["errno"] == "ECONNREFUSED", got
        assert set(got["all"].values()) <= {"ECONNREFUSED", "ENETUNREACH", "EADDRNOTAVAIL"}
        ok = sandboxed(
            provider, programs, home, rules, "tcp_connect.py", str(granted.port), "granted"
        )
        assert ok["reached"], ok  # in-sandbox control: the granted port is the host's
        assert control(programs, home, "tcp_connect.py", str(other.port), "forbidden")["reached"]
    finally:
        granted.close()
        other.close()
