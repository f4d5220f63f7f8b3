"""The edge proxy's cost (issue 32): per request and per MB, against a direct connection, in one
run of ``python-sb --os-sandbox=bwrap``.

A server on the host's loopback answers ``/small`` (2 bytes) and ``/big`` (16 MiB). The rule
``net=ALLOW|TCP|localhost|PORT|OUT`` names a host, so the edge proxy runs; inside the sandbox
the same program fetches alternately **directly** (``127.0.0.1:PORT``: pasta's host-loopback
forward of that port, which the proxy does not see) and **through the proxy** (a plain-HTTP
proxy request to ``HTTP_PROXY``'s address: the proxy judges ``localhost:PORT`` and connects
to it from the host). Every request opens a new connection. Reported: the medians and their ratio
(proxy / direct). The Python layer is off so that its cost does not hide the proxy's.
"""

from __future__ import annotations

import http.server
import socketserver
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cases import PYTHON_SB

BIG = 16 * 1024 * 1024

CLIENT = r"""
import http.client, os, statistics, sys, time
port, rounds, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
proxy = os.environ["HTTP_PROXY"].rsplit(":", 1)
proxy_port = int(proxy[1])

def fetch(via_proxy):
    start = time.perf_counter()
    if via_proxy:
        conn = http.client.HTTPConnection("127.0.0.1", proxy_port, timeout=60)
        conn.request("GET", f"http://localhost:{port}{path}")
    else:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("GET", path)
    answer = conn.getresponse()
    size = len(answer.read())
    conn.close()
    assert answer.status == 200, answer.status
    return time.perf_counter() - start, size

fetch(False); fetch(True)  # warm both paths
direct, proxied = [], []
for _ in range(rounds):
    direct.append(fetch(False)[0])
    proxied.append(fetch(True)[0])
print(statistics.median(direct), statistics.median(proxied), fetch(True)[1])
"""


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    payload = {"/small": b"ok", "/big": b"x" * BIG}

    def do_GET(self) -> None:
        body = self.payload.get(self.path, b"")
        self.send_response(200 if body else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def setup(workdir: Path) -> None:
    (workdir / ".py-sandboxes").write_text(f"expose-ro={workdir}\n")
    (workdir / "client.py").write_text(CLIENT)


def _measure(path: str, label: str, per_mb: bool) -> Callable[[Path, int], dict[str, Any]]:
    def measure(workdir: Path, runs: int) -> dict[str, Any]:
        server = _Server(("127.0.0.1", 0), _Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.server_address[1]
        rounds = max(5, runs if not per_mb else runs // 3)
        try:
            out = subprocess.run(
                [
                    PYTHON_SB,
                    "--os-sandbox=bwrap",
                    "--py-sandbox=false",
                    f"--net=ALLOW|TCP|localhost|{port}|OUT",
                    str(workdir / "client.py"),
                    str(port),
                    str(rounds),
                    path,
                ],
                cwd=workdir,
                capture_output=True,
                text=True,
                check=False,
                timeout=600,
            )
        finally:
            server.shutdown()
        if out.returncode != 0:
            raise RuntimeError(f"{label} failed:\n{out.stderr[-2000:]}")
        direct, proxied, size = out.stdout.split()
        d, p = float(direct), float(proxied)
        if per_mb:
            mb = int(size) / (1024 * 1024)
            d, p = d / mb, p / mb
            unit = "ms per MiB"
        else:
            unit = "ms per request (new connection)"
        return {
            "name": label,
            "kind": "value",
            "value": round(p / d, 2),
            "unit": f"x (proxy {p * 1000:.2f} vs direct {d * 1000:.2f} {unit})",
            "proxy_ms": round(p * 1000, 3),
            "direct_ms": round(d * 1000, 3),
        }

    return measure


CASES: list[Any] = [
    _measure("/small", "edge proxy / direct: one small request", per_mb=False),
    _measure("/big", "edge proxy / direct: 16 MiB download", per_mb=True),
]
