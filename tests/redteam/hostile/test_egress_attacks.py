"""Attacks on the edge proxy (issue 32): ways around a host-name ``net=`` rule.

The world is ``tests/e2e/test_edge_proxy.py``'s: servers standing for ``granted.test`` and
``refused.test`` on another network namespace. The rules grant ``granted.test`` only, the
Python layer is off (what holds is the proxy and the ruleset). Each attack is a small program
that prints whether it reached the refused host (or the host's loopback), judged by what the
servers logged; each has its control, the same program under plain python3 reaching it.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conformance.remote import World
from tests.e2e.test_edge_proxy import GRANT, needs, world
from tests.helpers import PYTHON_SB, base_env

__all__ = ["world"]  # the fixture, imported for this module's tests

ATTACK = r"""
import json, socket, ssl, sys
kind, address, port, name = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
got = b""
try:
    with socket.create_connection((address, port), timeout=20) as sock:
        if kind == "front":  # TLS to one address, naming another host
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            with context.wrap_socket(sock, server_hostname=name) as tls:
                tls.sendall(f"GET /front HTTP/1.1\r\nHost: {name}\r\n\r\n".encode())
                while chunk := tls.recv(4096):
                    got += chunk
        elif kind == "connect-lie":  # a proxy CONNECT to the refused host, lying in Host
            lie = "Host: granted.test:8443"
            sock.sendall(f"CONNECT {name}:8443 HTTP/1.1\r\n{lie}\r\n\r\n".encode())
            got = sock.recv(4096)
        elif kind == "connect-to":  # a proxy CONNECT to NAME (host:port)
            sock.sendall(f"CONNECT {name} HTTP/1.1\r\nHost: {name}\r\n\r\n".encode())
            got = sock.recv(4096)
        elif kind == "absolute-lie":  # a proxy GET for the refused host, lying in Host
            sock.sendall(
                f"GET http://{name}:8080/abs HTTP/1.1\r\nHost: granted.test\r\n\r\n".encode()
            )
            got = sock.recv(4096)
        elif kind == "raw":  # neither HTTP nor TLS: nothing names a host
            sock.sendall(b"\x00\x01exfiltrated-bytes\r\n\r\n")
            got = sock.recv(4096)
except OSError as exc:
    got = type(exc).__name__.encode()
print(json.dumps({"answer": got[:200].decode(errors="replace")}))
"""


def attack(
    world: World, project: Path, home: Path, provider: str | None, *args: str
) -> dict[str, str]:
    """``ATTACK args`` in the sandbox (``provider``) or under plain python3 (``None``)."""

    (project / ".py-sandboxes").write_text("# the rules come from the command line\n")
    (project / "attack.py").write_text(ATTACK)
    if provider is None:
        argv = [sys.executable, "attack.py", *args]
    else:
        argv = [
            PYTHON_SB, f"--os-sandbox={provider}", "--py-sandbox=false",
            f"--expose-ro={project}", f"--net={GRANT}", "attack.py", *args,
        ]  # fmt: skip
    done = subprocess.run(
        [
            "unshare", "--mount", "--propagation", "private", "sh", "-c",
            'mount --bind "$0" /etc/hosts && exec "$@"', str(world.hosts), *argv,
        ],
        cwd=project, env=base_env(home), capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.stdout, done.stderr
    return dict(json.loads(done.stdout))


def reached_refused(world: World, before: int) -> bool:
    return any(line.startswith("refused ") for line in world.requests()[before:])


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_tls_to_the_refused_address_naming_the_granted_host_reaches_only_it(
    provider: str, world: World, project: Path, home: Path
) -> None:
    """Domain fronting in reverse: TLS to refused.test's address with server name
    granted.test. The control reaches the refused server; in the sandbox the proxy connects to
    granted.test (the name), so the refused server sees nothing."""

    needs(provider)
    before = len(world.requests())
    control = attack(world, project, home, None, "front", world.refused, "8443", "granted.test")
    assert "200" in control["answer"] and reached_refused(world, before)
    before = len(world.requests())
    result = attack(world, project, home, provider, "front", world.refused, "8443", "granted.test")
    assert "hello from granted" in result["answer"], result
    assert not reached_refused(world, before)


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_tls_naming_the_refused_host_is_refused(
    provider: str, world: World, project: Path, home: Path
) -> None:
    """TLS to the granted host's address, naming refused.test: refused by name (a TLS alert),
    though the address is the granted host's."""

    needs(provider)
    before = len(world.requests())
    control = attack(world, project, home, None, "front", world.granted, "8443", "refused.test")
    assert "200" in control["answer"], control
    result = attack(world, project, home, provider, "front", world.granted, "8443", "refused.test")
    assert result["answer"] in ("SSLError", "ConnectionResetError", ""), result
    assert len(world.requests()) == before + 1  # the control's request only


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
@pytest.mark.parametrize("kind", ["connect-lie", "absolute-lie"])
def test_proxy_requests_lying_in_host_are_judged_by_their_target(
    provider: str, kind: str, world: World, project: Path, home: Path
) -> None:
    """A proxy request whose target is refused.test and whose Host line says granted.test:
    the target decides (403); refused.test gets nothing."""

    needs(provider)
    before = len(world.requests())
    result = attack(world, project, home, provider, kind, "127.0.0.1", "3128", "refused.test")
    assert result["answer"].startswith("HTTP/1.1 403 Connection to [refused.test]:"), result
    assert not reached_refused(world, before)


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_bytes_naming_no_host_are_judged_by_address(
    provider: str, world: World, project: Path, home: Path
) -> None:
    """Neither TLS nor HTTP, to the refused address on a port the name rule grants: nothing
    names a host, no address rule grants it: closed, the server gets nothing."""

    needs(provider)
    before = len(world.requests())
    result = attack(world, project, home, provider, "raw", world.refused, "8080", "-")
    assert result["answer"] in ("", "ConnectionResetError"), result
    assert not reached_refused(world, before)


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_the_proxy_is_no_way_to_the_hosts_loopback(
    provider: str, world: World, project: Path, home: Path
) -> None:
    """CONNECT 127.0.0.1:PORT through the proxy, to a service on the host's loopback: refused
    (no rule grants that address). The control reaches the service directly."""

    needs(provider)
    service = socket.socket()
    service.bind(("127.0.0.1", 0))
    service.listen()
    port = service.getsockname()[1]
    reached: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = service.accept()
            except OSError:
                return
            with conn:
                reached.append(conn.recv(100))
                conn.sendall(b"HTTP/1.1 200 OK\r\n\r\nhost service")

    threading.Thread(target=serve, daemon=True).start()
    try:
        control = attack(world, project, home, None, "raw", "127.0.0.1", str(port), "-")
        assert "host service" in control["answer"]
        count = len(reached)
        result = attack(
            world, project, home, provider, "connect-to", "127.0.0.1", "3128", f"127.0.0.1:{port}"
        )
        assert result["answer"].startswith("HTTP/1.1 403 Connection to [127.0.0.1]:"), result
        assert len(reached) == count
    finally:
        service.close()
