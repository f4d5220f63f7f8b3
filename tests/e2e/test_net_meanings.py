"""One meaning per ``net=`` rule under every enforcer (issue 11, network points), through the
real ``python-sb``: DENY by name holds for the name's addresses (point 3); an ``IN`` rule's HOST
is the address the program binds, forwarded from the host by the namespace providers (point 5);
a UDP server granted ``IN`` answers its peers (point 9)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.test_unshare_e2e import provider_ok
from tests.helpers import (
    PYTHON,
    PYTHON_SB,
    base_env,
    require,
    require_tool,
    run_python,
    run_sb,
)

SELF_CONNECT = """
import socket, sys
srv = socket.socket()
srv.bind(("127.0.0.1", int(sys.argv[1])))
srv.listen()
try:
    socket.create_connection(("127.0.0.1", srv.getsockname()[1]), timeout=5).close()
    print("CONNECTED")
except ConnectionError as exc:
    print("REFUSED", type(exc).__name__)
"""

PYTHON_LAYER = ["subprocess", "landlock", "bwrap", "unshare"]


@pytest.fixture(autouse=True)
def rule_file(project: Path) -> None:
    """A rule file, so that no run starts in learning mode; the rules come from the command
    line (a test that needs its own file writes over it)."""

    (project / ".py-sandboxes").write_text("# the rules come from the command line\n")


def needs(provider: str) -> None:
    provider_ok(provider)
    if provider in ("bwrap", "unshare"):
        require_tool("pasta", "passt")
        require_tool("nft", "nftables")


def sb(
    provider: str, project: Path, env: dict[str, str], *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return run_sb(
        [f"--os-sandbox={provider}", f"--expose-ro={project}", *args],
        cwd=project,
        env=env,
        timeout=timeout,
    )


@pytest.mark.parametrize("provider", PYTHON_LAYER)
def test_deny_name_refuses_its_address(provider: str, project: Path, home: Path) -> None:
    """``DENY|*|localhost|*|OUT`` beside ``ALLOW|*|*|*|OUT``: connecting to 127.0.0.1 (the
    name's address, hard-coded) is refused by the Python layer; without the DENY line (the
    control) the same program connects."""

    needs(provider)
    (project / "prog.py").write_text(SELF_CONNECT)
    env = base_env(home)
    port = str(free_port())
    assert run_python(["prog.py", port], cwd=project, env=env).stdout == "CONNECTED\n"
    rules = ("--net=ALLOW|*|*|*|OUT", f"--net=ALLOW|TCP|127.0.0.1|{port}|IN")
    control = sb(provider, project, env, *rules, "--python-import=socket", "prog.py", port)
    assert control.stdout == "CONNECTED\n", control.stderr
    result = sb(
        provider,
        project,
        env,
        *rules,
        "--net=DENY|*|localhost|*|OUT",
        "--python-import=socket",
        "prog.py",
        port,
    )
    assert result.stdout == "REFUSED RuleConnectionRefusedError\n", result.stderr


@pytest.mark.parametrize("provider", PYTHON_LAYER)
def test_unresolvable_deny_name_stops_the_run(provider: str, project: Path, home: Path) -> None:
    """A DENY name that does not resolve cannot be enforced: nothing runs (DESIGN decision 6),
    whichever enforcer holds the rule."""

    needs(provider)
    (project / "prog.py").write_text("open('ran', 'w').close()\n")
    (project / ".py-sandboxes").write_text(
        f"expose-rw={project}\nnet=ALLOW|*|*|*|OUT\nnet=DENY|*|nowhere.invalid|*|OUT\n"
    )
    env = base_env(home)
    result = run_sb([f"--os-sandbox={provider}", "prog.py"], cwd=project, env=env)
    assert result.returncode == 2, result.stderr
    assert ".py-sandboxes(3): net=DENY|*|nowhere.invalid|*|OUT: cannot resolve" in result.stderr
    assert not (project / "ran").exists()
    # Control: the same file without the DENY line runs the program.
    (project / ".py-sandboxes").write_text(f"expose-rw={project}\nnet=ALLOW|*|*|*|OUT\n")
    assert run_sb([f"--os-sandbox={provider}", "prog.py"], cwd=project, env=env).returncode == 0
    assert (project / "ran").exists()


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_forwarded_port_is_free_when_the_run_returns(
    provider: str, project: Path, home: Path
) -> None:
    """When ``python-sb`` returns, pasta has exited and the host port of an ``IN`` forward is
    free again: the next run forwarding the same port starts (pasta is detached from
    python-sb; before it was waited for, it still listened for a moment and a run right after
    failed with "Failed to bind any port")."""

    needs(provider)
    (project / "prog.py").write_text("print('ran')\n")
    env = base_env(home)
    port = free_port()
    for _ in range(5):
        result = sb(provider, project, env, f"--net=ALLOW|TCP|127.0.0.1|{port}|IN", "prog.py")
        assert result.stdout == "ran\n", result.stderr
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", port))  # EADDRINUSE while pasta still listens
            probe.listen()


def free_port(kind: int = socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


SERVER = """
import socket, sys
host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
srv = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
srv.bind((host, port))
srv.listen()
print("listening", flush=True)
for _ in range(count):
    conn, _peer = srv.accept()
    conn.recv(16)  # the client speaks first, as an HTTP or MCP client does
    conn.sendall(b"from-sandbox")
    conn.close()
"""


def host_address() -> str:
    """A non-loopback IPv4 address of this host (the one its default route uses)."""

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.200", 9))  # no packet is sent for a UDP connect
        except OSError:
            return ""
        address = str(probe.getsockname()[0])
    return "" if address.startswith("127.") else address


def reach(address: str, port: int, wait: float = 10) -> str:
    """What a client on the host gets from ``address:port``: the server's greeting, or the
    error's class name (a refusal is retried for ``wait`` seconds: the forward may need a
    moment after "listening")."""

    deadline = time.monotonic() + wait
    while True:
        try:
            with socket.create_connection((address, port), timeout=5) as client:
                client.sendall(b"hello")
                return client.recv(20).decode() or "closed"
        except OSError as exc:
            if time.monotonic() > deadline or not isinstance(exc, ConnectionRefusedError):
                return type(exc).__name__
            time.sleep(0.1)


REMOTE_CLIENT = """
import socket, sys
try:
    with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10) as client:
        client.sendall(b"hello")
        print(client.recv(20).decode() or "closed")
except OSError as exc:
    print(type(exc).__name__)
"""


@contextlib.contextmanager
def remote_machine() -> Iterator[Callable[[int], str] | None]:
    """Another machine on a link of its own: a network namespace (``unshare --net``, as root)
    joined to this host by a veth pair, 10.213.N.2 there and 10.213.N.1 here. Yields
    ``connect(port)`` -> what a client there gets from this host's 10.213.N.1:port, or ``None``
    when this process may not create one (not root, no CAP_NET_ADMIN, no ``ip``)."""

    ip = shutil.which("ip") or shutil.which("ip", path="/usr/sbin:/sbin")
    if ip is None or os.geteuid() != 0:
        yield None
        return
    tag = f"{os.getpid() % 50000:x}"
    here, there = f"pysb{tag}a", f"pysb{tag}b"
    subnet = f"10.213.{os.getpid() % 250}"
    holder = subprocess.Popen(["unshare", "--net", "sleep", "600"])
    try:
        created = subprocess.run(
            [ip, "link", "add", here, "type", "veth", "peer", "name", there],
            capture_output=True,
            check=False,
        )
        if created.returncode != 0:
            yield None
            return
        enter = ["nsenter", f"--net=/proc/{holder.pid}/ns/net"]
        for argv in (
            [ip, "link", "set", there, "netns", str(holder.pid)],
            [ip, "addr", "add", f"{subnet}.1/30", "dev", here],
            [ip, "link", "set", here, "up"],
            [*enter, ip, "addr", "add", f"{subnet}.2/30", "dev", there],
            [*enter, ip, "link", "set", there, "up"],
        ):
            subprocess.run(argv, check=True, capture_output=True)

        def connect(port: int) -> str:
            result = subprocess.run(
                [*enter, sys.executable, "-c", REMOTE_CLIENT, f"{subnet}.1", str(port)],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            return result.stdout.strip() or result.stderr

        yield connect
    finally:
        subprocess.run([ip or "ip", "link", "del", here], capture_output=True, check=False)
        holder.kill()
        holder.wait()


def serve(
    provider: str,
    project: Path,
    env: dict[str, str],
    rule: str,
    bind: str,
    port: int,
    count: int,
    python_layer: bool,
) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [
            PYTHON_SB,
            f"--os-sandbox={provider}",
            f"--py-sandbox={'true' if python_layer else 'false'}",
            f"--expose-ro={project}",
            "--python-import=socket",
            f"--net={rule}",
            "server.py",
            bind,
            str(port),
            str(count),
        ],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line != "listening\n":
        proc.kill()
        _, err = proc.communicate(timeout=30)
        raise AssertionError(f"the server did not start: {line!r} {err}")
    return proc


@pytest.mark.parametrize(
    ("provider", "python_layer"),
    [
        ("subprocess", True),
        *((p, layer) for p in ("landlock", "bwrap", "unshare") for layer in (True, False)),
    ],
)
def test_wildcard_in_rule_serves_every_host_address(
    provider: str, python_layer: bool, project: Path, home: Path
) -> None:
    """The seed's MCP example, ``net=ALLOW|TCP|0.0.0.0/32|PORT|IN``: a server in the sandbox
    binds every interface, and clients reach it on the host's port: on the host's loopback, on
    the host's own address, and from another machine (a client in another network namespace,
    joined to the host by a veth pair, when this test may create one)."""

    needs(provider)
    address = host_address()
    require(address, "no non-loopback IPv4 address on this host")
    (project / "server.py").write_text(SERVER)
    port = free_port()
    with remote_machine() as remote:
        proc = serve(
            provider,
            project,
            base_env(home),
            f"ALLOW|TCP|0.0.0.0/32|{port}|IN",
            "0.0.0.0",
            port,
            3 if remote else 2,
            python_layer,
        )
        try:
            assert reach("127.0.0.1", port) == "from-sandbox"
            assert reach(address, port) == "from-sandbox"
            if remote:
                assert remote(port) == "from-sandbox"
        except BaseException:
            proc.kill()
            proc.communicate(timeout=30)
            raise
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err


@pytest.mark.parametrize("python_layer", [True, False], ids=["py-on", "py-off"])
@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_loopback_in_rule_serves_the_host_loopback_only(
    provider: str, python_layer: bool, project: Path, home: Path
) -> None:
    """``net=ALLOW|TCP|127.0.0.1|PORT|IN``: a loopback-only server; the host's loopback reaches
    it, the host's own address does not (nothing is forwarded from it)."""

    needs(provider)
    address = host_address()
    require(address, "no non-loopback IPv4 address on this host")
    (project / "server.py").write_text(SERVER)
    port = free_port()
    proc = serve(
        provider,
        project,
        base_env(home),
        f"ALLOW|TCP|127.0.0.1|{port}|IN",
        "127.0.0.1",
        port,
        10,
        python_layer,
    )
    try:
        assert reach("127.0.0.1", port) == "from-sandbox"
        assert reach(address, port, wait=0) == "ConnectionRefusedError"
        assert reach("127.0.0.1", port) == "from-sandbox"  # the server was still there
    finally:
        proc.kill()
        proc.communicate(timeout=30)


FETCH = """
import socket, sys
try:
    with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5) as c:
        print("GOT", c.recv(20).decode())
except OSError as exc:
    print("FAILED", type(exc).__name__)
"""


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_wildcard_out_does_not_reach_the_host_loopback_and_says_so(
    provider: str, project: Path, home: Path
) -> None:
    """An announced limit: under the namespace providers ``net=ALLOW|TCP|*|P|OUT`` does not
    reach a service on the host's loopback (under the Python layer alone it does); python-sb
    says so at start and in ``--explain``; a rule naming 127.0.0.1 reaches it."""

    needs(provider)
    (project / "fetch.py").write_text(FETCH)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(10)
    port = server.getsockname()[1]
    env = base_env(home)
    common = [f"--expose-ro={project}", "--python-import=socket"]

    def answer() -> None:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        conn.sendall(b"from-host")
        conn.close()

    import threading

    try:
        threads = [threading.Thread(target=answer, daemon=True) for _ in range(2)]
        for thread in threads:
            thread.start()
        control = run_sb(
            [
                "--os-sandbox=subprocess",
                *common,
                f"--net=ALLOW|TCP|*|{port}|OUT",
                "fetch.py",
                str(port),
            ],
            cwd=project,
            env=env,
        )
        assert control.stdout == "GOT from-host\n", control.stderr
        limited = run_sb(
            [
                f"--os-sandbox={provider}",
                *common,
                f"--net=ALLOW|TCP|*|{port}|OUT",
                "fetch.py",
                str(port),
            ],
            cwd=project,
            env=env,
        )
        assert limited.stdout.startswith("FAILED"), limited.stdout
        assert "a '*' host does not reach this host's own services on its loopback" in (
            limited.stderr
        )
        named = run_sb(
            [
                f"--os-sandbox={provider}",
                *common,
                f"--net=ALLOW|TCP|127.0.0.1|{port}|OUT",
                "fetch.py",
                str(port),
            ],
            cwd=project,
            env=env,
        )
        assert named.stdout == "GOT from-host\n", named.stderr
        assert "does not reach this host's own services" not in named.stderr
    finally:
        server.close()
    explained = run_sb(
        [
            f"--os-sandbox={provider}",
            *common,
            f"--net=ALLOW|TCP|*|{port}|OUT",
            "--explain",
            "fetch.py",
        ],
        cwd=project,
        env=env,
    )
    assert f"limit: 'net=ALLOW|TCP|*|{port}|OUT' (<arg>): a '*' host" in explained.stdout, (
        explained.stdout
    )
    assert "does not reach this host's own services on its loopback" in explained.stdout


UDP_ECHO = """
import socket, sys
server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
server.bind(("0.0.0.0", int(sys.argv[1])))
print("ready", flush=True)
data, peer = server.recvfrom(100)
server.sendto(b"echo:" + data, peer)
try:
    server.sendto(b"x", ("127.0.0.1", int(sys.argv[2])))
    print("ELSEWHERE SENT")
except OSError as exc:
    print("ELSEWHERE", type(exc).__name__)
"""


@pytest.mark.parametrize(
    ("provider", "python_layer"),
    [
        ("subprocess", True),
        *((p, layer) for p in ("bwrap", "unshare") for layer in (True, False)),
    ],
)
def test_udp_server_answers_its_peers(
    provider: str, python_layer: bool, project: Path, home: Path
) -> None:
    """``net=ALLOW|UDP|*|P|IN``: a UDP server answers a client on the host (the reply belongs
    to the IN grant under every enforcer); a datagram to another port of the host is refused
    (no OUT rule). Control: the same program under plain python sends both."""

    needs(provider)
    (project / "udp.py").write_text(UDP_ECHO)
    port = free_port(socket.SOCK_DGRAM)
    other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    other.bind(("127.0.0.1", 0))
    env = base_env(home)

    def exchange(argv: list[str]) -> tuple[str, str, str]:
        proc = subprocess.Popen(
            [*argv, "udp.py", str(port), str(other.getsockname()[1])],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
            client.settimeout(1)
            answer = ""
            # The forward may need a moment (UDP is resent): a minute, however loaded the
            # machine (ten tries of a second each failed once under bwrap at load 5).
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                client.sendto(b"ping", ("127.0.0.1", port))
                try:
                    answer = client.recvfrom(100)[0].decode()
                    break
                except TimeoutError:
                    continue
        out, err = proc.communicate(timeout=30)
        return answer, out, err

    def arrived() -> bool:
        other.settimeout(0.5)
        try:
            other.recvfrom(10)
        except TimeoutError:
            return False
        return True

    try:
        answer, out, err = exchange([PYTHON, "-I"])
        assert (answer, out, arrived()) == ("echo:ping", "ELSEWHERE SENT\n", True), err
        answer, out, err = exchange(
            [
                PYTHON_SB,
                f"--os-sandbox={provider}",
                f"--py-sandbox={'true' if python_layer else 'false'}",
                f"--expose-ro={project}",
                "--python-import=socket",
                f"--net=ALLOW|UDP|*|{port}|IN",
            ]
        )
        elsewhere = arrived()
    finally:
        other.close()
    assert answer == "echo:ping", err
    assert not elsewhere  # no OUT rule: the other port of the host got nothing
    if python_layer:
        assert out == "ELSEWHERE RuleConnectionRefusedError\n", err
