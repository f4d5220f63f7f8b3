"""Sockets of the host: an abstract Unix socket, TCP ports no rule grants, UDP (loopback only).

``test_network_*.py`` files (network-namespace providers) sit next to this one; these tests
cover what every kernel provider must hold with the rules of ``harness.Scene``.
"""

from __future__ import annotations

import json
import os
import socket
from typing import Any

import pytest

from tests.helpers import require
from tests.redteam.hostile.harness import (
    Listener,
    Scene,
    assert_reached,
    assert_refused,
    expect_refusal,
    serve_attempt,
    verdict_of,
)

# ECONNREFUSED / ENETUNREACH: a provider with its own network namespace, where nothing listens.
NET_REFUSALS = ["EACCES", "EPERM", "ECONNREFUSED", "ENETUNREACH"]


@pytest.mark.kernel
def test_connect_host_abstract_unix_socket(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    expect_refusal(request, kernel_provider, "unix_abstract")
    name = scene.abstract.address[1:]
    assert_reached(scene.control("unix_abstract.py", name, scene.abstract.banner))
    verdict = scene.sandboxed(kernel_provider, "unix_abstract.py", name, scene.abstract.banner)
    assert_refused(verdict, NET_REFUSALS, provider=kernel_provider)


@pytest.mark.kernel
def test_connect_host_unix_socket_by_path(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    expect_refusal(request, kernel_provider, "unix_path")
    args = (scene.unix_path.address, scene.unix_path.banner)
    assert_reached(scene.control("unix_path.py", *args))
    verdict = scene.sandboxed(kernel_provider, "unix_path.py", *args)
    # ENOENT: a provider whose file tree holds only the exposures.
    assert_refused(verdict, [*NET_REFUSALS, "ENOENT"], provider=kernel_provider)


@pytest.mark.kernel
def test_connect_host_unix_socket_in_read_only_exposure(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    """Issue 23, class 5: a read-only bind mount does not stop connect() on a socket inode;
    connecting is a write of the socket's path (SPEC 2.4: judged by the file rules)."""

    expect_refusal(request, kernel_provider, "unix_path_read_only")
    service = Listener(socket.AF_UNIX, str(scene.ro / "service.sock"), "read-only-service")
    try:
        args = (service.address, service.banner)
        assert_reached(scene.control("unix_path.py", *args))
        verdict = scene.sandboxed(kernel_provider, "unix_path.py", *args)
    finally:
        service.close()
        os.unlink(service.address)
    assert_refused(verdict, [*NET_REFUSALS, "ENOENT"], provider=kernel_provider)


@pytest.mark.kernel
def test_unix_sockets_allowed_under_landlock_is_announced(scene: Scene) -> None:
    """With landlock.unix-sockets=true nothing judges a socket's path (Landlock ABI <= 7):
    the host's socket outside every exposure is reached, and the run says so at start."""

    from pysandboxes.providers import get_provider

    available = get_provider("landlock").availability()
    require(available.ok, f"os-sandbox=landlock cannot run here: {available.reason}")
    scene.rules_file.write_text(scene.rules_file.read_text() + "landlock.unix-sockets=true\n")
    args = (scene.unix_path.address, scene.unix_path.banner)
    verdict = scene.sandboxed("landlock", "unix_path.py", *args)
    assert verdict["reached"], verdict  # the limit: if this fails, Landlock learnt paths
    assert "landlock.unix-sockets=true: Landlock cannot restrict" in verdict["_stderr"]


@pytest.mark.kernel
def test_send_to_host_unix_datagram_socket_in_read_only_exposure(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    """The same for a datagram socket reached by sendto() (a logging service's /dev/log)."""

    expect_refusal(request, kernel_provider, "unix_send_read_only")
    path = str(scene.ro / "log.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(path)
    server.settimeout(0.5)
    try:
        verdict = scene.sandboxed(kernel_provider, "unix_send.py", path)
        try:
            got = server.recv(100)
        except TimeoutError:
            got = b""
        assert got == b"", f"{kernel_provider}: the host's socket received {got!r}"
        assert_refused(verdict, [*NET_REFUSALS, "ENOENT"], provider=kernel_provider)
        assert_reached(scene.control("unix_send.py", path))
        assert server.recv(100) == b"injected from the sandbox"
    finally:
        server.close()
        os.unlink(path)


@pytest.mark.kernel
def test_connect_tcp_port_no_rule_grants(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    expect_refusal(request, kernel_provider, "tcp_connect")
    args = (str(scene.forbidden.port), scene.forbidden.banner)
    assert_reached(scene.control("tcp_connect.py", *args))
    verdict = scene.sandboxed(kernel_provider, "tcp_connect.py", *args)
    assert_refused(verdict, NET_REFUSALS, provider=kernel_provider)


@pytest.mark.kernel
def test_serve_tcp_port_no_rule_grants(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    expect_refusal(request, kernel_provider, "tcp_bind")
    port = scene.bind_forbidden
    verdict, host_connected = serve_attempt(
        scene.spawn(kernel_provider, "tcp_bind.py", str(port)), port
    )
    assert not host_connected, f"{kernel_provider}: the host reached a port no IN rule grants"
    if verdict["errno"] is not None or verdict["reached"]:
        # Refused at bind (Landlock); a provider with its own network namespace lets the bind
        # happen where nothing from outside can reach it (the final verdict: no connection).
        assert_refused(verdict, ["EACCES", "EPERM"], provider=kernel_provider)
    control, control_connected = serve_attempt(scene.spawn(None, "tcp_bind.py", str(port)), port)
    assert_reached(control)
    assert control_connected


def _serve_unbound(scene: Scene, provider: str | None, family: str) -> tuple[dict[str, Any], bool]:
    """Drive ``attacks/tcp_listen_unbound.py``: connect from the host to the port it got."""

    proc = scene.spawn(provider, "tcp_listen_unbound.py", family)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    host_connected = False
    if first.startswith('{"listening"'):
        port = json.loads(first)["listening"]
        host = "::1" if family == "inet6" else "127.0.0.1"
        try:
            with socket.create_connection((host, port), timeout=3) as client:
                host_connected = client.recv(10) == b"served"
        except OSError:
            host_connected = False
        rest, err = proc.communicate(timeout=60)
    else:
        rest, err = proc.communicate(timeout=60)
        rest = first + rest
    return verdict_of(rest, err, proc.returncode, "tcp_listen_unbound"), host_connected


@pytest.mark.kernel
@pytest.mark.parametrize("family", ["inet", "inet6"])
def test_listen_on_a_socket_never_bound(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene, family: str
) -> None:
    """Issue 23, class 2: the kernel binds a socket that listens unbound to a port it picks, on
    every address; Landlock's bind rule is never consulted. The scene's rules grant one IN
    port, so a legitimate server must still be able to listen (legit_net.py checks it)."""

    expect_refusal(request, kernel_provider, "tcp_listen_unbound")
    verdict, host_connected = _serve_unbound(scene, kernel_provider, family)
    assert not host_connected, f"{kernel_provider}: the host reached an unbound listener"
    if verdict["errno"] is not None or verdict["reached"]:
        assert_refused(verdict, ["EACCES", "EPERM"], provider=kernel_provider)
    control, control_connected = _serve_unbound(scene, None, family)
    assert_reached(control)
    assert control_connected


@pytest.mark.kernel
def test_listen_without_any_in_rule(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    """The same with no IN rule at all: nothing may listen (the filter refuses listen)."""

    expect_refusal(request, kernel_provider, "tcp_listen_unbound")
    text = scene.rules_file.read_text()
    scene.rules_file.write_text(
        "\n".join(line for line in text.splitlines() if not line.endswith("|IN")) + "\n"
    )
    verdict, host_connected = _serve_unbound(scene, kernel_provider, "inet")
    assert not host_connected, f"{kernel_provider}: the host reached an unbound listener"
    if verdict["errno"] is not None or verdict["reached"]:
        assert_refused(verdict, ["EACCES", "EPERM"], provider=kernel_provider)


@pytest.mark.kernel
def test_send_udp_no_rule_grants(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    expect_refusal(request, kernel_provider, "udp_send")
    verdict = scene.sandboxed(kernel_provider, "udp_send.py", str(scene.udp_port))
    arrived = scene.udp_received(timeout=0.5)
    assert arrived is None, f"{kernel_provider}: a datagram reached the host: {arrived!r}"
    if verdict["reached"]:
        # sendto() succeeded inside the sandbox, but (checked above) nothing left it: a provider
        # with its own network namespace sends into its own loopback.
        assert kernel_provider != "landlock", verdict
    else:
        assert_refused(verdict, NET_REFUSALS, provider=kernel_provider)
    assert_reached(scene.control("udp_send.py", str(scene.udp_port)))
    assert scene.udp_received(timeout=5) == b"exfiltrated"


@pytest.mark.kernel
def test_legitimate_network_and_process_use_keeps_working(
    kernel_provider: str, scene: Scene
) -> None:
    failed = scene.legit(
        kernel_provider,
        "legit_net.py",
        str(scene.granted.port),
        scene.granted.banner,
        str(scene.bind_granted),
    )
    assert not failed, f"{kernel_provider}: legitimate steps failed: {failed}"


@pytest.mark.kernel
@pytest.mark.parametrize("how", ["sendto", "sendmsg", "sendmmsg", "connectopt"])
def test_tcp_fast_open_to_port_no_rule_grants(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene, how: str
) -> None:
    """Issue 23, class 1: a send with MSG_FASTOPEN connects inside the call, where Landlock's
    connect hook never runs; TCP_FASTOPEN_CONNECT defers the connection to the first write."""

    expect_refusal(request, kernel_provider, "tcp_fastopen_" + how)
    args = (how, str(scene.forbidden.port), scene.forbidden.banner)
    assert_reached(scene.control("tcp_fastopen.py", *args))
    verdict = scene.sandboxed(kernel_provider, "tcp_fastopen.py", *args)
    # EOPNOTSUPP (errno's name for it: ENOTSUP): the seccomp filter's answer, the kernel's own
    # when Fast Open is off; TCP_FASTOPEN_CONNECT's connect() meets Landlock's rule (EACCES).
    assert_refused(verdict, [*NET_REFUSALS, "ENOTSUP"], provider=kernel_provider)
