"""The edge proxy: host-name ``net=`` rules judged where the sandbox's TCP traffic leaves.

Under ``bwrap`` and ``unshare`` (``providers/netns.py``), when the ``net=`` rules name a host for
TCP, python-sb starts this module as a process of its own on the host side (outside the
sandbox, like pasta) and ends it with the run (end-of-file on its standard input, which only
python-sb holds). It:

1. creates its listening socket **inside the sandbox's network namespace** (a forked child
   joins the holder's user and network namespaces with ``setns`` and hands the socket back over
   a socket pair), on ``[::]:PORT`` (and so ``127.0.0.1:PORT`` and ``[::1]:PORT``). The
   namespace's nftables ruleset redirects every TCP connection the sandbox makes to a
   non-loopback address to that port (``nat`` output chain), so a program that ignores
   ``HTTPS_PROXY`` arrives here too; the redirected connection keeps its original destination,
   read with ``SO_ORIGINAL_DST``;
2. reads what the connection names: an HTTP proxy request (``CONNECT host:port`` or an
   absolute URI, from clients that honour ``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY``, which
   python-sb sets to this port) or, on a redirected connection, the TLS ClientHello's server
   name or the HTTP ``Host`` line (no TLS termination);
3. judges it with the rules of the run (``guard.network``'s matcher, DENY first): a host name
   by the rules naming it (or ``*``), then each address the name resolves to **now, on the
   host** (a DENY of an address still wins; a ``*`` rule does not reach the host's loopback);
   traffic that names no host by its original address alone;
4. connects to the **name's** address (a lying ``Host`` or server name reaches the host it
   names, never the address the program dialled) from the host's network, and copies bytes
   both ways; or refuses: an HTTP ``403`` whose reason names the host and the rule, a TLS
   ``access_denied`` alert, or a closed connection, and a line in ``--denials``.

Standard library only; Linux only (``setns``, ``SO_ORIGINAL_DST``). Configuration arrives as
JSON in a descriptor (:func:`main`), never on a command line.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from pysandboxes.policy.netrules import host_key

if sys.platform != "linux":  # setns, SO_ORIGINAL_DST: Linux only (started by providers/netns.py)
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

#: ``SO_ORIGINAL_DST`` (``linux/netfilter_ipv4.h``) and ``IP6T_SO_ORIGINAL_DST``: the same 80.
SO_ORIGINAL_DST = 80
SOL_IPV6 = 41
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000

#: How long a redirected connection may take to send its first bytes (a TLS ClientHello or an
#: HTTP request line) before it is judged as traffic naming no host (protocols where the
#: server speaks first).
FIRST_BYTES_WAIT = 3.0
#: The most bytes read to find a request head or a ClientHello.
HEAD_LIMIT = 65536
CONNECT_TIMEOUT = 30.0

#: The clause every refusal carries (issue 32, item 3): an agent that reads it should not try
#: another way.
NO_OTHER_ROUTE = (
    "every route out of this sandbox passes python-sb's edge proxy (direct connections, "
    "proxies, other addresses of the host), so retrying another way is refused too"
)

#: TLS alert record: fatal (2) access_denied (49).
TLS_ACCESS_DENIED = b"\x15\x03\x01\x00\x02\x02\x31"

HTTP_METHODS = (
    b"GET ",
    b"HEAD ",
    b"POST ",
    b"PUT ",
    b"DELETE ",
    b"OPTIONS ",
    b"PATCH ",
    b"TRACE ",
    b"CONNECT ",
)


# -- what a connection names -------------------------------------------------------------------


def tls_server_name(data: bytes) -> str | bool | None:
    """The server name of a TLS ClientHello at the start of ``data``: the name, ``None`` when
    the hello is complete and names none, ``False`` when ``data`` is not (yet) a whole hello."""

    if len(data) < 5 or data[0] != 0x16:
        return False
    length = struct.unpack("!H", data[3:5])[0]
    if len(data) < 5 + length:
        return False
    body = data[5 : 5 + length]
    try:
        if body[0] != 1:  # handshake type client_hello
            return None
        pos = 4 + 2 + 32  # handshake header, version, random
        pos += 1 + body[pos]  # session id
        pos += 2 + struct.unpack("!H", body[pos : pos + 2])[0]  # cipher suites
        pos += 1 + body[pos]  # compression methods
        if pos + 2 > len(body):
            return None
        end = pos + 2 + struct.unpack("!H", body[pos : pos + 2])[0]
        pos += 2
        while pos + 4 <= end:
            kind, size = struct.unpack("!HH", body[pos : pos + 4])
            pos += 4
            if kind == 0:  # server_name
                names = body[pos : pos + size]
                at = 2
                while at + 3 <= len(names):
                    name_type, name_len = names[at], struct.unpack("!H", names[at + 1 : at + 3])[0]
                    if name_type == 0:
                        return host_key(names[at + 3 : at + 3 + name_len].decode("ascii"))
                    at += 3 + name_len
                return None
            pos += size
    except (IndexError, struct.error, UnicodeDecodeError):
        return None
    return None


def split_head(data: bytes) -> tuple[list[str], bytes] | None:
    """An HTTP request head's lines and the bytes after it, or ``None`` when ``data`` does not
    hold the whole head yet."""

    end = data.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = data[:end].decode("latin-1").split("\r\n")
    return lines, data[end + 4 :]


def header(lines: Sequence[str], name: str) -> str | None:
    for line in lines[1:]:
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() == name:
            return value.strip()
    return None


def split_authority(text: str, default_port: int) -> tuple[str, int]:
    """``host[:port]`` or ``[v6]:port`` into (host, port)."""

    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") else default_port
        return host.lower(), port
    host, sep, port_text = text.rpartition(":")
    if not sep or not port_text.isdigit():
        return host_key(text), default_port
    return host_key(host), int(port_text)


def is_address(host: str) -> bool:
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
    except OSError:
        return False
    return True


# -- judging ----------------------------------------------------------------------------------


class Verdict:
    """Where to connect, or why not."""

    def __init__(
        self,
        address: str | None,
        rule: str | None = None,
        origin: str | None = None,
        reason: str | None = None,
    ) -> None:
        self.address = address
        self.rule = rule
        self.origin = origin
        self.reason = reason


class Judge:
    """The rules of the run, for TCP ``OUT``: ``guard.network``'s rows and matcher (one
    meaning with the Python layer)."""

    def __init__(
        self,
        rows: tuple[Any, ...],
        resolve: Callable[[str], list[str]] | None = None,
    ) -> None:
        from pysandboxes.guard.network import make_matcher

        self.rows = rows
        self.match = make_matcher(rows)
        self.resolve = resolve or _resolve
        self.any_address_rule = any(row[2] == "ip" and not row[0] for row in rows)

    @staticmethod
    def key(address: str) -> tuple[int, int]:
        if ":" in address:
            value = int.from_bytes(socket.inet_pton(socket.AF_INET6, address), "big")
            if value >> 32 == 0xFFFF:
                return (4, value & 0xFFFFFFFF)
            return (6, value)
        return (4, int.from_bytes(socket.inet_pton(socket.AF_INET, address), "big"))

    def _rule_kind(self, text: str | None) -> str | None:
        for row in self.rows:
            if row[9] == text:
                return str(row[2])
        return None

    def address(self, address: str, port: int) -> Verdict:
        """Traffic that names no host: its address alone."""

        allowed, rule, origin = self.match("TCP", (), self.key(address), port, "OUT")
        if allowed and self._rule_kind(rule) == "any" and _is_loopback(address):
            return Verdict(None, rule, origin, "a '*' host does not reach this host's loopback")
        return Verdict(address if allowed else None, rule, origin)

    def name(self, name: str, port: int) -> Verdict:
        """A host name: the rules naming it (or ``*``); then each address it resolves to now
        (DENY rules of addresses still win)."""

        if is_address(name):
            return self.address(name, port)
        allowed, rule, origin = self.match("TCP", (name,), None, port, "OUT")
        if not allowed and rule is not None:
            return Verdict(None, rule, origin)  # a DENY of the name (or of every host)
        if not allowed and not self.any_address_rule:
            return Verdict(None, None, None)  # never resolved: no DNS for a refused name
        try:
            addresses = self.resolve(name)
        except OSError as exc:
            return Verdict(None, rule, origin, f"{name} does not resolve ({exc})")
        first: Verdict | None = None
        for address in addresses:
            ok, arule, aorigin = self.match("TCP", (name,), self.key(address), port, "OUT")
            kind = self._rule_kind(arule)
            if ok and _is_loopback(address) and kind != "name":
                verdict = Verdict(
                    None, arule, aorigin, "only a rule naming it reaches this host's loopback"
                )
            else:
                verdict = Verdict(address if ok else None, arule, aorigin)
            if verdict.address is not None:
                return verdict
            if first is None or (verdict.rule is not None and first.rule is None):
                first = verdict
        return first or Verdict(None, rule, origin, f"{name} has no address")


def _resolve(name: str) -> list[str]:
    found: list[str] = []
    for family, *_rest, sockaddr in socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP):
        if family in (socket.AF_INET, socket.AF_INET6):
            address = str(sockaddr[0]).split("%", 1)[0]
            if address not in found:
                found.append(address)
    found.sort(key=lambda a: ":" in a)
    return found


def _is_loopback(address: str) -> bool:
    import ipaddress

    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_unspecified


def refusal_message(host: str, port: int, verdict: Verdict) -> str:
    """SPEC §2.4's refusal, with the edge proxy's clause (issue 32, item 3)."""

    target = f"[{host}]:{port}"
    if verdict.reason is not None and verdict.rule is None:
        why = f"DENIED: {verdict.reason}"
    elif verdict.reason is not None:
        why = f"DENIED: {verdict.reason} (rule '{verdict.rule}' from {verdict.origin})"
    elif verdict.rule is not None:
        why = f"DENIED by explicit rule '{verdict.rule}' from {verdict.origin}"
    else:
        why = "DENIED: no net= rule allows it"
    return f"Connection to {target} {why}; {NO_OTHER_ROUTE}"


# -- the proxy --------------------------------------------------------------------------------


class Proxy:
    """Accepts on the listener, judges and relays each connection in a thread of its own."""

    def __init__(
        self,
        listener: socket.socket,
        judge: Judge,
        denials: str | None = None,
        secrets: Sequence[dict[str, Any]] = (),
        tls: dict[str, str] | None = None,
    ) -> None:
        self.listener = listener
        self.judge = judge
        self.denials = denials
        self.own = listener.getsockname()[1]
        self._lock = threading.Lock()
        #: host (as :func:`host_key` gives it) -> the secrets substituted in its requests
        #: (``secret=``).
        self.secrets: dict[str, list[dict[str, Any]]] = {}
        for secret in secrets:
            for host in secret["hosts"]:
                self.secrets.setdefault(host_key(host), []).append(secret)
        self.server_context: Any = None
        if self.secrets and tls is not None:
            import ssl

            self.server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.server_context.load_cert_chain(tls["cert"], tls["key"])

    def terminates(self, host: str) -> bool:
        """Whether TLS to ``host`` is terminated here: a ``secret=`` names it (in any case,
        with or without a final dot, as ``net=`` matching compares names)."""

        return self.server_context is not None and host_key(host) in self.secrets

    def serve_forever(self) -> None:
        while True:
            try:
                conn, _peer = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    # -- one connection --

    def _handle(self, conn: socket.socket) -> None:
        try:
            with conn:
                original = self._original_destination(conn)
                if original is None:
                    self._explicit(conn)
                else:
                    self._transparent(conn, *original)
        except Exception:
            pass

    def _original_destination(self, conn: socket.socket) -> tuple[str, int] | None:
        """Where a redirected connection was going, or ``None`` for one made to the proxy
        itself (a client honouring the proxy variables)."""

        local = conn.getsockname()
        mapped = conn.family == socket.AF_INET6 and str(local[0]).startswith("::ffff:")
        try:
            if conn.family == socket.AF_INET or mapped:
                raw = conn.getsockopt(socket.SOL_IP, SO_ORIGINAL_DST, 16)
                port = struct.unpack("!H", raw[2:4])[0]
                address = socket.inet_ntop(socket.AF_INET, raw[4:8])
            else:
                raw = conn.getsockopt(SOL_IPV6, SO_ORIGINAL_DST, 28)
                port = struct.unpack("!H", raw[2:4])[0]
                address = socket.inet_ntop(socket.AF_INET6, raw[8:24])
        except OSError:
            return None
        if port == self.own and _is_loopback(address):
            return None
        return address, port

    def _read_until(
        self, conn: socket.socket, done: Callable[[bytes], bool], wait: float | None
    ) -> bytes:
        conn.settimeout(wait)
        data = b""
        try:
            while len(data) < HEAD_LIMIT and not done(data):
                chunk = conn.recv(HEAD_LIMIT - len(data))
                if not chunk:
                    break
                data += chunk
        except TimeoutError:
            pass
        conn.settimeout(None)
        return data

    def _peek_until(self, conn: socket.socket, done: Callable[[bytes], bool], wait: float) -> bytes:
        """What the client sent first, left unread (``MSG_PEEK``): a TLS connection to a
        secret's host is handed whole to the TLS server side."""

        import select
        import time

        deadline = time.monotonic() + wait
        data = b""
        while len(data) < HEAD_LIMIT and not done(data):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([conn], [], [], left)[0]:
                break
            more = conn.recv(HEAD_LIMIT, socket.MSG_PEEK)
            if len(more) == len(data):  # nothing new yet (or end of file): wait a little
                if not more or time.monotonic() > deadline:
                    break
                time.sleep(0.005)
            data = more
        return data

    def _terminate(self, conn: socket.socket, host: str, port: int, verdict: Verdict) -> None:
        """A connection to a secret's host: TLS terminated with the run's certificate (only
        the sandbox trusts its authority), the placeholder replaced by the real value in the
        secret's header of the request, the request sent on over TLS verified against the
        host's real certificate, the answer copied back. One request per connection
        (``Connection: close``); a body is forwarded by its ``Content-Length``."""

        import ssl

        assert verdict.address is not None
        try:
            client = self.server_context.wrap_socket(conn, server_side=True)
        except (OSError, ssl.SSLError):
            return
        with client:
            data = self._read_until(client, lambda d: b"\r\n\r\n" in d, CONNECT_TIMEOUT)
            parsed = split_head(data)
            if parsed is None:
                return
            lines, rest = parsed
            head = self._substitute(host, lines)
            length = header(lines, "content-length")
            wanted = int(length) if length and length.isdigit() else 0
            while len(rest) < wanted:
                chunk = client.recv(min(262144, wanted - len(rest)))
                if not chunk:
                    break
                rest += chunk
            try:
                raw = socket.create_connection((verdict.address, port), timeout=CONNECT_TIMEOUT)
                upstream = ssl.create_default_context().wrap_socket(raw, server_hostname=host)
            except (OSError, ssl.SSLError) as exc:
                self._http_error(client, 502, "Bad Gateway", f"{host}:{port}: {exc}")
                return
            with upstream:
                upstream.sendall(head + rest)
                while True:
                    try:
                        chunk = upstream.recv(262144)
                    except (OSError, ssl.SSLError):
                        break
                    if not chunk:
                        break
                    client.sendall(chunk)

    def _substitute(self, host: str, lines: Sequence[str]) -> bytes:
        """The request head with each secret of ``host`` put in place of its placeholder, in
        its header only; ``Connection: close``."""

        secrets = self.secrets.get(host_key(host), [])
        out = [lines[0]]
        for line in lines[1:]:
            key, sep, value = line.partition(":")
            lowered = key.strip().lower()
            if lowered in ("connection", "keep-alive", "proxy-connection"):
                continue
            for secret in secrets:
                if sep and lowered == secret["header"].lower():
                    value = value.replace(secret["placeholder"], secret["value"])
            out.append(f"{key}{sep}{value}")
        out.append("Connection: close")
        return ("\r\n".join(out) + "\r\n\r\n").encode("latin-1")

    def _explicit(self, conn: socket.socket) -> None:
        data = self._read_until(conn, lambda d: b"\r\n\r\n" in d, CONNECT_TIMEOUT)
        parsed = split_head(data)
        if parsed is None or not parsed[0] or len(parsed[0][0].split(" ")) != 3:
            self._http_error(conn, 400, "Bad Request", "python-sb's edge proxy: no request")
            return
        lines, rest = parsed
        method, target, version = lines[0].split(" ")
        if method.upper() == "CONNECT":
            host, port = split_authority(target, 443)
            verdict = self.judge.name(host, port)
            if verdict.address is None:
                self._refuse_http(conn, host, port, verdict)
                return
            if self.terminates(host):
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                self._terminate(conn, host, port, verdict)
                return
            upstream = self._connect(conn, host, port, verdict, http=True)
            if upstream is None:
                return
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self._relay(conn, upstream, rest)
            return
        if not target.lower().startswith("http://"):
            self._http_error(
                conn, 400, "Bad Request", "python-sb's edge proxy takes CONNECT or http:// URIs"
            )
            return
        authority, _, path = target[7:].partition("/")
        host, port = split_authority(authority, 80)
        verdict = self.judge.name(host, port)
        if verdict.address is None:
            self._refuse_http(conn, host, port, verdict)
            return
        upstream = self._connect(conn, host, port, verdict, http=True)
        if upstream is None:
            return
        kept = [
            line
            for line in lines[1:]
            if line.partition(":")[0].strip().lower()
            not in ("connection", "proxy-connection", "proxy-authorization", "keep-alive")
        ]
        # One request per connection: a client reusing it for another host would reach this one.
        head = "\r\n".join([f"{method} /{path} {version}", *kept, "Connection: close"])
        self._relay(conn, upstream, head.encode("latin-1") + b"\r\n\r\n" + rest)

    def _transparent(self, conn: socket.socket, address: str, port: int) -> None:
        def complete(data: bytes) -> bool:
            if data[:1] == b"\x16":
                return tls_server_name(data) is not False
            if data.startswith(HTTP_METHODS):
                return b"\r\n\r\n" in data
            return len(data) > 0

        data = self._peek_until(conn, complete, FIRST_BYTES_WAIT)
        name: str | None = None
        tls = data[:1] == b"\x16"
        is_http = data.startswith(HTTP_METHODS)
        if tls:
            found = tls_server_name(data)
            name = found if isinstance(found, str) else None
        elif is_http:
            parsed = split_head(data)
            host_line = header(parsed[0], "host") if parsed else None
            if host_line:
                name = split_authority(host_line, port)[0]
        if name and not is_address(name):
            verdict = self.judge.name(name, port)
            shown = name
        else:
            verdict = self.judge.address(address, port)
            shown = address
        if verdict.address is None:
            self._denial(shown, port, verdict)
            _drain(conn, len(data))  # unread bytes would turn the close into a reset
            if is_http:
                self._send_403(conn, refusal_message(shown, port, verdict))
            elif tls:
                with contextlib.suppress(OSError):
                    conn.sendall(TLS_ACCESS_DENIED)
            return
        if tls and name and self.terminates(name):
            self._terminate(conn, name, port, verdict)  # the hello is still unread
            return
        _drain(conn, len(data))
        upstream = self._connect(conn, shown, port, verdict, http=is_http)
        if upstream is not None:
            self._relay(conn, upstream, data)

    # -- helpers --

    def _connect(
        self, conn: socket.socket, host: str, port: int, verdict: Verdict, http: bool
    ) -> socket.socket | None:
        assert verdict.address is not None
        try:
            return socket.create_connection((verdict.address, port), timeout=CONNECT_TIMEOUT)
        except OSError as exc:
            if http:
                self._http_error(
                    conn, 502, "Bad Gateway", f"{host}:{port} ({verdict.address}): {exc}"
                )
            return None

    def _relay(self, conn: socket.socket, upstream: socket.socket, first: bytes) -> None:
        upstream.settimeout(None)
        for sock in (conn, upstream):  # the proxy forwards what it has at once (no Nagle wait)
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with upstream:
            if first:
                upstream.sendall(first)
            back = threading.Thread(target=_copy, args=(upstream, conn), daemon=True)
            back.start()
            _copy(conn, upstream)
            back.join()

    def _refuse_http(self, conn: socket.socket, host: str, port: int, verdict: Verdict) -> None:
        self._denial(host, port, verdict)
        self._send_403(conn, refusal_message(host, port, verdict))

    def _send_403(self, conn: socket.socket, message: str) -> None:
        # The reason phrase carries the message: urllib and http.client show it in their
        # exception ("Tunnel connection failed: 403 Connection to ... DENIED ...").
        self._http_error(conn, 403, message, message)

    def _http_error(self, conn: socket.socket, code: int, reason: str, body: str) -> None:
        payload = (body + "\n").encode("utf-8", "replace")
        head = (
            f"HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(payload)}\r\nConnection: close\r\n"
            "X-Python-Sb: edge-proxy\r\n\r\n"
        )
        with contextlib.suppress(OSError):
            conn.sendall(head.encode("utf-8", "replace") + payload)

    def _denial(self, host: str, port: int, verdict: Verdict) -> None:
        """One ``--denials`` line, the Python layer's shape (``guard/denials.py``)."""

        if not self.denials:
            return
        target = f"[{host}]:{port}"
        suggestion = None
        if verdict.rule is None and verdict.reason is None:
            suggestion = f"net=ALLOW|TCP|{host}|{port}|OUT"
        line = json.dumps(
            {
                "kind": "net",
                "target": target,
                "rule": verdict.rule,
                "origin": verdict.origin,
                "suggestion": suggestion,
                "detail": "OUT",
                "enforcer": "edge-proxy",
                "message": refusal_message(host, port, verdict),
            }
        )
        with self._lock, contextlib.suppress(OSError):
            fd = os.open(self.denials, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                os.write(fd, (line + "\n").encode())
            finally:
                os.close(fd)


def _drain(conn: socket.socket, count: int) -> None:
    """Read the ``count`` bytes :meth:`Proxy._peek_until` left in the socket."""

    while count > 0:
        chunk = conn.recv(count)
        if not chunk:
            return
        count -= len(chunk)


def make_run_ca(directory: str, hosts: Sequence[str]) -> dict[str, str]:
    """A certificate authority for this run and one certificate for ``hosts`` signed by it,
    made with ``openssl`` in ``directory`` (python-sb's own, never in the sandbox's tree):
    ``{"ca": PEM path, "cert": ..., "key": ...}``. The keys never leave ``directory``; the
    sandbox gets the authority's certificate only."""

    import shutil
    import subprocess

    openssl = shutil.which("openssl")
    if openssl is None:
        raise OSError("secret= needs openssl (apt-get install openssl) for the run's certificates")

    def run(*args: str) -> None:
        done = subprocess.run([openssl, *args], cwd=directory, capture_output=True, check=False)
        if done.returncode != 0:
            raise OSError(f"openssl {args[0]}: {done.stderr.decode(errors='replace').strip()}")

    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    run(
        "req", "-x509", *ec, "-days", "2", "-subj", "/CN=python-sb run CA",
        "-keyout", "ca.key", "-out", "ca.pem",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    )  # fmt: skip
    with open(os.path.join(directory, "leaf.ext"), "w", encoding="ascii") as handle:
        handle.write("subjectAltName=" + ",".join(f"DNS:{h}" for h in hosts) + "\n")
        handle.write("extendedKeyUsage=serverAuth\n")
    run("req", *ec, "-subj", f"/CN={hosts[0]}", "-keyout", "leaf.key", "-out", "leaf.csr")
    run(
        "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-out", "leaf.pem", "-extfile", "leaf.ext",
    )  # fmt: skip
    os.unlink(os.path.join(directory, "ca.key"))  # nothing more to sign
    return {
        "ca": os.path.join(directory, "ca.pem"),
        "cert": os.path.join(directory, "leaf.pem"),
        "key": os.path.join(directory, "leaf.key"),
    }


def _copy(source: socket.socket, sink: socket.socket) -> None:
    try:
        while True:
            chunk = source.recv(262144)
            if not chunk:
                break
            sink.sendall(chunk)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


# -- the listener, inside the sandbox's network namespace -------------------------------------


def listen_in(holder_pid: int, port: int) -> socket.socket:
    """A listening TCP socket on ``[::]:port`` (or ``0.0.0.0:port`` without IPv6) inside the
    network namespace of ``holder_pid``: a forked child joins its user and network namespaces
    (``setns``; a forked child is single-threaded, as joining a user namespace needs) and
    sends the socket back over a socket pair."""

    import ctypes

    here, there = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            here.close()
            libc = ctypes.CDLL(None, use_errno=True)
            for kind, flag in (("user", CLONE_NEWUSER), ("net", CLONE_NEWNET)):
                fd = os.open(f"/proc/{holder_pid}/ns/{kind}", os.O_RDONLY | os.O_CLOEXEC)
                if libc.setns(fd, flag) != 0:
                    raise OSError(ctypes.get_errno(), f"setns {kind}")
                os.close(fd)
            try:
                sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
                sock.bind(("::", port))
            except OSError:
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.bind(("0.0.0.0", port))
            sock.listen(128)
            socket.send_fds(there, [b"L"], [sock.fileno()])
            code = 0
        except BaseException as exc:
            with contextlib.suppress(OSError):
                there.sendall(f"E{exc}".encode())
        finally:
            os._exit(code)
    there.close()
    try:
        message, fds, _flags, _addr = socket.recv_fds(here, 4096, 1)
    finally:
        here.close()
        os.waitpid(pid, 0)
    if not fds:
        raise OSError(f"the edge proxy's listener: {message.decode(errors='replace')[1:]}")
    return socket.socket(fileno=fds[0])


# -- without a network namespace (landlock): a listener on the host's loopback ---------------

#: python-sb's one host-loopback listener for this run (``landlock``): made when the port is
#: first needed (the Python layer's rule is built before the provider prepares).
_HOST_LISTENER: list[socket.socket] = []


def host_listener() -> socket.socket:
    """The run's edge-proxy listener on ``127.0.0.1`` (a free port), made once. Under
    ``landlock`` (no network namespace of its own) only programs that honour the proxy
    variables reach it; Landlock grants connect to its port."""

    if not _HOST_LISTENER:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        _HOST_LISTENER.append(sock)
    return _HOST_LISTENER[0]


class HostEdge:
    """The edge proxy of a ``landlock`` run: started from python-sb with the host listener;
    it ends at end-of-file on its standard input, whose write end the program inherits (python-sb
    may exec into the program): the proxy lives exactly as long as the program and its
    children hold it."""

    def __init__(self, rows: tuple[Any, ...], denials: str | None) -> None:
        import subprocess

        listener = host_listener()
        self.port = int(listener.getsockname()[1])
        config = {"listen_fd": listener.fileno(), "rows": rows, "denials": denials}
        # The configuration through a pipe the proxy reads to its end (written once it runs:
        # rules larger than a pipe's buffer): python-sb's process may have no memfd_create
        # (macOS; the portable paths, PYSANDBOXES_PORTABLE), and a pipe is everywhere.
        config_r, config_w = os.pipe()
        read_end, self.write_end = os.pipe()
        try:
            src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _CODE.format(src=src), str(config_r)],
                stdin=read_end,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                pass_fds=(config_r, listener.fileno()),
                start_new_session=True,
            )
        finally:
            os.close(config_r)
            os.close(read_end)
        try:
            with os.fdopen(config_w, "wb") as out:
                out.write(json.dumps(config).encode())
        except OSError:  # the proxy ended before reading it: said below ("could not start")
            pass
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        self.process.stdout.close()
        if line != b"ready\n":
            self.close()
            raise OSError("the edge proxy could not start")
        listener.close()
        _HOST_LISTENER.clear()
        os.set_inheritable(self.write_end, True)

    def close(self) -> None:
        """End the proxy (python-sb stayed as the parent)."""

        with contextlib.suppress(OSError):
            os.close(self.write_end)
        with contextlib.suppress(Exception):
            self.process.wait(timeout=5)


_CODE = (
    "import sys; sys.path.insert(0, {src!r}); "
    "from pysandboxes.providers.edge_proxy import main; sys.exit(main())"
)


def main(argv: Sequence[str] | None = None) -> int:
    """``edge_proxy CONFIG_FD``: CONFIG_FD holds JSON ``{"holder": PID, "port": N, "rows":
    [...], "denials": PATH|null}``; prints ``ready`` once it listens; ends at end-of-file of
    its standard input."""

    args = list(sys.argv[1:] if argv is None else argv)
    with os.fdopen(int(args[0]), "rb") as handle:
        config = json.loads(handle.read())
    rows = tuple(
        tuple(
            tuple(tuple(p) for p in value) if i == 7 and value is not None else value
            for i, value in enumerate(row)
        )
        for row in config["rows"]
    )
    try:
        if "listen_fd" in config:  # landlock: the host-loopback listener python-sb made
            listener = socket.socket(fileno=int(config["listen_fd"]))
        else:
            listener = listen_in(int(config["holder"]), int(config["port"]))
    except OSError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    proxy = Proxy(
        listener, Judge(rows), config.get("denials"), config.get("secrets", ()), config.get("tls")
    )
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    # Nobody reads these pipes any more: a write there must never block the proxy.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    with contextlib.suppress(OSError):
        while sys.stdin.buffer.read(4096):
            pass
    return 0


if __name__ == "__main__":  # pragma: no cover - run by netns.start
    sys.exit(main())
