"""A remote host for the network tests that need one: "another machine" on a veth pair.

The edge proxy (issue 32) judges host names on the sandbox's TCP traffic to non-loopback
addresses only (loopback is never redirected to it), so its tests need servers that are not on
this host's loopback. :func:`other_machine` makes them: a network namespace joined to this host
by a veth pair, serving HTTPS on :data:`TLS_PORT` and plain HTTP on :data:`HTTP_PORT` at two
addresses, one standing for ``granted.test`` and one for ``refused.test``. Each answers
``hello from granted`` or ``hello from refused`` (which address was reached, whatever the
request says) and logs every request. The certificates are made with ``openssl`` (a CA the
clients are told to trust, a leaf for both names and both addresses). The names are mapped to
those addresses by an ``/etc/hosts`` bind-mounted in a mount namespace of the test's own
(:func:`in_world`), in which python-sb runs: python-sb, its edge proxy and the program resolve
them as they would any name.

Used by the conformance matrix (``tests/conformance``, the ``remote`` host side) and by
``tests/e2e/test_edge_proxy.py``. Needs root, ``ip(8)``, ``unshare``/``nsenter`` and
``openssl``: skips saying so otherwise (fails under ``PYSANDBOXES_REQUIRE_ALL=1``).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import require, require_tool

GRANTED, REFUSED = "granted.test", "refused.test"
TLS_PORT, HTTP_PORT = 8443, 8080

SERVER = r"""
import http.server, socketserver, ssl, sys, threading
log_path, cert, key, tls_port, http_port, *addresses = sys.argv[1:]
names = {addresses[0]: "granted", addresses[1]: "refused"}
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        who = names[self.server.server_address[0]]
        with open(log_path, "a") as log:
            auth = self.headers.get("Authorization")
            extra = f" {auth}" if auth else ""
            log.write(f"{who} {self.headers.get('Host')} {self.path}{extra}\n")
        body = f"hello from {who}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
servers = []
for address in addresses:
    plain = Server((address, int(http_port)), Handler)
    tls = Server((address, int(tls_port)), Handler)
    tls.socket = context.wrap_socket(tls.socket, server_side=True)
    servers += [plain, tls]
for server in servers:
    threading.Thread(target=server.serve_forever, daemon=True).start()
print("listening", flush=True)
sys.stdin.read()
"""


@dataclass
class World:
    """The remote host: its two addresses, the ``/etc/hosts`` naming them, the request log and
    the CA that signed its certificate."""

    granted: str
    refused: str
    hosts: Path
    log: Path
    ca: Path

    def requests(self) -> list[str]:
        """``WHO HOST PATH [AUTHORIZATION]`` for each request the servers got, in order."""

        return self.log.read_text().splitlines() if self.log.exists() else []


def require_world() -> str:
    """Skip (fail under REQUIRE_ALL) unless a remote host can be made here: the path of ip(8)."""

    ip = shutil.which("ip") or shutil.which("ip", path="/usr/sbin:/sbin")
    require(ip is not None and os.geteuid() == 0, "needs root and ip(8) for a veth pair")
    require_tool("openssl", "openssl")
    require_tool("nsenter", "util-linux")
    require_tool("unshare", "util-linux")
    assert ip is not None
    return ip


#: How many other machines this process has made (see :func:`other_machine`).
_MACHINES = itertools.count()


@contextlib.contextmanager
def other_machine(tmp: Path) -> Iterator[World]:
    """The servers' machine: a network namespace on a veth link, 10.M.N.2 (granted.test)
    and 10.M.N.3 (refused.test) there, 10.M.N.1 here (N from this process's id, so that two
    test processes at once get two links; M from 214 by the machines this process made)."""

    ip = require_world()
    # One test process may hold two at once (the conformance matrix's for its session, the
    # edge e2e tests' for their module): the link's name and the subnet take a count too.
    count = next(_MACHINES)
    tag = f"{os.getpid() % 50000:x}{count}"
    here, there = f"pyse{tag}a", f"pyse{tag}b"
    subnet = f"10.{214 + count % 40}.{os.getpid() % 250}"
    granted, refused = f"{subnet}.2", f"{subnet}.3"
    _certificates(tmp, granted, refused)
    holder = subprocess.Popen(["unshare", "--net", "sleep", "3600"])
    server: subprocess.Popen[str] | None = None
    try:
        subprocess.run(
            [ip, "link", "add", here, "type", "veth", "peer", "name", there],
            check=True,
            capture_output=True,
        )
        enter = ["nsenter", f"--net=/proc/{holder.pid}/ns/net"]
        for argv in (
            [ip, "link", "set", there, "netns", str(holder.pid)],
            [ip, "addr", "add", f"{subnet}.1/29", "dev", here],
            [ip, "link", "set", here, "up"],
            [*enter, ip, "addr", "add", f"{granted}/29", "dev", there],
            [*enter, ip, "addr", "add", f"{refused}/29", "dev", there],
            [*enter, ip, "link", "set", there, "up"],
            [*enter, ip, "link", "set", "lo", "up"],
        ):
            subprocess.run(argv, check=True, capture_output=True)
        log = tmp / "requests.log"
        (tmp / "server.py").write_text(SERVER)
        files = [str(tmp / "leaf.pem"), str(tmp / "leaf.key"), str(TLS_PORT), str(HTTP_PORT)]
        server = subprocess.Popen(
            [*enter, sys.executable, str(tmp / "server.py"), str(log), *files, granted, refused],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert server.stdout is not None
        assert server.stdout.readline() == "listening\n"
        hosts = tmp / "hosts"
        hosts.write_text(
            f"127.0.0.1 localhost\n::1 localhost\n{granted} {GRANTED}\n{refused} {REFUSED}\n"
        )
        yield World(granted, refused, hosts, log, tmp / "ca.pem")
    finally:
        if server is not None:
            server.kill()
            server.wait()
        subprocess.run([ip, "link", "del", here], capture_output=True, check=False)
        holder.kill()
        holder.wait()


def _certificates(tmp: Path, *addresses: str) -> None:
    """A CA and one leaf certificate for both names and both addresses, made with openssl."""

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=tmp, check=True, capture_output=True)

    openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test CA",
        "-keyout", "ca.key", "-out", "ca.pem",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=keyCertSign",
    )  # fmt: skip
    san = ",".join([f"DNS:{GRANTED}", f"DNS:{REFUSED}", *(f"IP:{a}" for a in addresses)])
    (tmp / "leaf.ext").write_text(f"subjectAltName={san}\n")
    openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={GRANTED}",
        "-keyout", "leaf.key", "-out", "leaf.csr",
    )  # fmt: skip
    openssl(
        "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-out", "leaf.pem", "-extfile", "leaf.ext",
    )  # fmt: skip


def in_world(world: World, argv: Sequence[str]) -> list[str]:
    """``argv`` run in a mount namespace of its own whose ``/etc/hosts`` names the remote
    host's two addresses (the host's own file is left alone)."""

    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        'mount --bind "$0" /etc/hosts && exec "$@"',
        str(world.hosts),
        *argv,
    ]
