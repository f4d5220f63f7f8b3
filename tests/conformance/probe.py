"""The program every cell of the conformance matrix runs: one operation, one machine-readable line.

``probe.py OP ARGS...`` performs OP and prints exactly one line on stdout:

- ``OUTCOME allowed`` — the operation reached its objective (a file read, a value seen, a reply
  received);
- ``OUTCOME refused <what>`` — it did not; ``<what>`` is the errno name (``EACCES``, ``ENOENT``),
  the exception class, or a word saying which check failed (``absent``, ``status-1``).

Servers (``serve_tcp``, ``serve_udp``) and ``wait_then_read`` first print ``READY`` and wait for
the host side of the test (a client, a file created after start). Only ``os``, ``sys`` and
``errno`` (to name a refusal) are imported up front: each operation imports what it needs, so a
case can grant exactly the modules it names (``python-import=``) and the Python layer judges
nothing else.

The same file runs under plain python3 (the control of every case) and under ``python-sb``,
and as the host of a partial-mode worker (the entry-point columns, issue 24 item 8):
``probe.py --worker RULES PROVIDER OP ARGS...`` runs OP as a ``@sandbox`` function in a worker
started under RULES, with ``os-sandbox=PROVIDER`` and ``py-sandbox=true`` as keyword rules (the
command line's ``--os-sandbox=``/``--py-sandbox=``), and prints the line the worker's function
returns (or, when the worker cannot start for its rules, what ``python-sb`` says when it runs
nothing); ``probe.py --eval RULES PROVIDER OP ARGS...`` evaluates OP's source with
``guarded_eval(rules=...)`` in its worker (spawned: the program kind ``eval-worker``) under
RULES and OP's eval-* lines, for the operations of ``EVAL_OPS`` (imports), and
``python-sb probe.py --eval-here OP ARGS...`` evaluates the same source in the worker the
guard forks from the program, the rule file holding the same lines (the reference).
"""

import errno
import os
import sys

TYPE_CHECKING = False  # as typing.TYPE_CHECKING: the probe imports nothing it does not use
if TYPE_CHECKING:
    import socket

TIMEOUT = 10.0


def _read(path: str) -> None:
    with open(path, "rb") as handle:
        handle.read(1)


def _reply_over_tcp(sock: "socket.socket") -> None:
    sock.settimeout(TIMEOUT)
    data = sock.recv(16)
    if data != b"pong":
        raise ConnectionError(f"unexpected reply {data!r}")


def op_read(path: str) -> None:
    _read(path)


def op_read_escaped(path: str) -> None:
    """Read ``path`` written with each byte that is not ASCII as its escape (``"\\udcc3"``
    for ``c3``, what ``os.fsdecode`` gives for bytes that are not UTF-8): CPython encodes that
    text to the same bytes, so the kernel opens the same file."""

    escaped = "".join(chr(0xDC00 + b) if b >= 0x80 else chr(b) for b in os.fsencode(path))
    _read(escaped)


def op_read_glob(pattern: str) -> str | None:
    """Read the first file matching ``pattern`` (names that differ between systems)."""

    import glob

    found = sorted(glob.glob(pattern))
    if not found:
        return "no-match"
    _read(found[0])
    return None


def op_read_has(path: str, text: str) -> str | None:
    with open(path, encoding="utf-8", errors="replace") as handle:
        if text not in handle.read():
            return "absent"
    return None


def op_list(path: str) -> None:
    os.listdir(path)


def op_listed(directory: str, name: str) -> str | None:
    return None if name in os.listdir(directory) else "absent"


def op_scanned(directory: str, name: str) -> str | None:
    with os.scandir(directory) as entries:
        return None if any(entry.name == name for entry in entries) else "absent"


def op_globbed(directory: str, name: str) -> str | None:
    import glob

    found = glob.glob(os.path.join(glob.escape(directory), "*"))
    return None if any(os.path.basename(path) == name for path in found) else "absent"


def op_walked(directory: str, name: str) -> str | None:
    for _root, dirs, files in os.walk(directory):
        if name in dirs or name in files:
            return None
    return "absent"


def op_accessible(path: str) -> str | None:
    """``os.access`` (metadata): ``ignore=`` says the path does not exist."""

    return None if os.access(path, os.R_OK) else "not-accessible"


def op_path_exists(path: str) -> str | None:
    """``pathlib.Path.exists`` (metadata)."""

    import pathlib

    return None if pathlib.Path(path).exists() else "absent"


def op_exists(path: str) -> str | None:
    """``os.stat`` (metadata, no content): ``ignore=`` says the path does not exist."""

    os.stat(path)
    return None


def op_write(path: str) -> None:
    with open(path, "ab") as handle:
        handle.write(b"x")


def op_create(path: str) -> None:
    with open(path, "xb") as handle:
        handle.write(b"x")


def op_mkdir(path: str) -> None:
    os.mkdir(path)


def op_remove(path: str) -> None:
    os.remove(path)


def op_rmdir(path: str) -> None:
    os.rmdir(path)


def op_rename(source: str, target: str) -> None:
    os.rename(source, target)


def op_symlink_read(target: str, link: str) -> None:
    os.symlink(target, link)
    _read(link)


def op_hardlink_read(source: str, link: str) -> None:
    os.link(source, link)
    _read(link)


def op_hardlink_write(source: str, link: str) -> None:
    os.link(source, link)
    op_write(link)


def op_cwd() -> None:
    """The working directory is known to the program (``os.getcwd``)."""

    os.getcwd()


def op_resolve(name: str) -> None:
    """Resolve a host name (``getaddrinfo``): the answer is the objective."""

    import socket

    socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)


def op_chmod(path: str) -> None:
    """Change a file's mode (metadata): 0o640, which no file of the tree has."""

    os.chmod(path, 0o640)


def op_utime(path: str) -> None:
    """Change a file's times (metadata): 1 000 000 000, which no file of the tree has."""

    os.utime(path, (1_000_000_000, 1_000_000_000))


def op_symlink_create(target: str, link: str) -> None:
    """Plant a symbolic link (its objective: the link exists on the host after the run)."""

    os.symlink(target, link)


def op_read_self() -> None:
    _read(__file__)


def op_tmpwrite() -> None:
    import tempfile

    fd, path = tempfile.mkstemp()
    try:
        os.write(fd, b"x")
    finally:
        os.close(fd)
        os.remove(path)


def op_env(name: str, value: str) -> str | None:
    seen = os.environ.get(name)
    if seen is None:
        return "absent"
    return None if value == "*" or seen == value else "other-value"


def op_environ_file(name: str) -> str | None:
    with open("/proc/self/environ", "rb") as handle:
        entries = handle.read().split(b"\0")
    return None if any(e.startswith(name.encode() + b"=") for e in entries) else "absent"


def op_getproxies_env(name: str) -> str | None:
    import urllib.request

    urllib.request.getproxies()  # scans the whole environment for *_proxy variables
    return op_env(name, "*")


def op_mimetypes_deb() -> str | None:
    import mimetypes

    # Only /etc/mime.types knows this one (CPython's built-in map does not).
    kind = mimetypes.guess_type("x.deb")[0]
    return None if kind == "application/vnd.debian.binary-package" else "fallback-map"


def op_timezone() -> None:
    import zoneinfo

    zoneinfo.ZoneInfo("Europe/Paris")


def op_certificates() -> str | None:
    import ssl

    loaded = ssl.create_default_context().cert_store_stats()["x509_ca"]
    return None if loaded > 0 else "no-certificates"


def op_os_release() -> None:
    import platform

    platform.freedesktop_os_release()


def op_getuser() -> None:
    import pwd

    pwd.getpwuid(os.getuid())


def op_connect(host: str, port: str) -> None:
    import socket

    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
        sock.sendall(b"ping")
        _reply_over_tcp(sock)


def op_udp(host: str, port: str) -> str | None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(3.0)
        sock.connect((host, int(port)))  # connected: a port unreachable is an error at once
        sock.send(b"ping")
        data = sock.recv(16)
        if data != b"pong":
            return "bad-reply"
    return None


# -- the remote host (``remote.py``: granted.test, refused.test on another network namespace) --


def _ca() -> str:
    """The remote host's CA, copied beside the probe by the harness."""

    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "ca.pem")


def _answered_by(body: bytes, who: str) -> str | None:
    """The objective of a remote case: the answer of ``who`` (each remote address answers
    ``hello from granted`` or ``hello from refused``, whatever the request named)."""

    return None if body.strip() == f"hello from {who}".encode() else "other-host"


def op_https_get(url: str, who: str) -> str | None:
    """GET ``url`` with urllib, which honours the proxy variables (``HTTPS_PROXY``)."""

    import ssl
    import urllib.request

    context = ssl.create_default_context(cafile=_ca())
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context))
    with opener.open(url, timeout=TIMEOUT) as answer:
        return _answered_by(answer.read(), who)


HTTPS_DIRECT = """
import http.client, ssl, sys
host, port, ca = sys.argv[1:4]
context = ssl.create_default_context(cafile=ca)
conn = http.client.HTTPSConnection(host, int(port), context=context, timeout=10)
conn.request("GET", "/")
sys.stdout.write(conn.getresponse().read().decode())
"""


def op_https_direct(host: str, port: str, who: str) -> str | None:
    """GET ``https://host:port/`` with http.client, which ignores the proxy variables."""

    import http.client
    import ssl

    context = ssl.create_default_context(cafile=_ca())
    conn = http.client.HTTPSConnection(host, int(port), context=context, timeout=TIMEOUT)
    try:
        conn.request("GET", "/")
        return _answered_by(conn.getresponse().read(), who)
    finally:
        conn.close()


def op_child_https_direct(host: str, port: str, who: str) -> str | None:
    """The same GET from a Python child (``-I -S``): a client the Python layer does not see,
    ignoring the proxy variables."""

    import subprocess

    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", HTTPS_DIRECT, host, port, _ca()],
        capture_output=True,
        timeout=TIMEOUT * 2,
    )
    if done.returncode != 0:
        return f"status-{done.returncode}"
    return _answered_by(done.stdout, who)


def op_http_host(address: str, port: str, host: str, who: str) -> str | None:
    """Plain HTTP sent to ``address`` with ``Host: host`` (a raw socket): the objective is
    ``who``'s answer, the server at ``address``."""

    import socket

    with socket.create_connection((address, int(port)), timeout=TIMEOUT) as sock:
        request = f"GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        sock.sendall(request.encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].split(b" ")
    if len(status) < 2 or status[1] != b"200":
        return "http-" + (status[1].decode(errors="replace") if len(status) > 1 else "none")
    return _answered_by(body, who)


def _ready() -> None:
    sys.stdout.write("READY\n")
    sys.stdout.flush()


def op_serve_tcp(host: str, port: str) -> None:
    """Serve one host client: its objective is judged by the host (a reply received)."""

    import contextlib
    import socket

    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((host, int(port)))
        server.listen()
        server.settimeout(TIMEOUT)
        _ready()
        conn, _ = server.accept()
        with conn:
            conn.settimeout(TIMEOUT)
            conn.recv(16)
            conn.sendall(b"pong")
            # Wait for the client to close: ending now could stop the sandbox's network (pasta)
            # before the reply reached the host. The host judges the objective, not this.
            with contextlib.suppress(OSError):
                conn.recv(16)


def op_serve_udp(host: str, port: str) -> None:
    import contextlib
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server:
        server.bind((host, int(port)))
        server.settimeout(TIMEOUT)
        _ready()
        _, peer = server.recvfrom(16)
        server.sendto(b"pong", peer)
        server.settimeout(3.0)
        with contextlib.suppress(OSError):
            server.recvfrom(16)  # the client's "ack": the reply reached the host (see serve_tcp)


def op_selftalk(host: str, port: str) -> str | None:
    """Serve and connect to oneself on loopback (one thread: the backlog holds the connection)."""

    import socket

    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((host, int(port)))
        server.listen()
        bound = server.getsockname()[1]
        with socket.create_connection((host, bound), timeout=TIMEOUT) as client:
            conn, _ = server.accept()
            with conn:
                client.sendall(b"ping")
                if conn.recv(16) != b"ping":
                    return "bad-data"
                conn.sendall(b"pong")
                _reply_over_tcp(client)
    return None


def op_unix_selftalk(path: str) -> None:
    """Serve and connect to oneself on a Unix socket at ``path``."""

    import socket

    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        server.listen()
        with socket.socket(socket.AF_UNIX) as client:
            client.settimeout(TIMEOUT)
            client.connect(path)
            conn, _ = server.accept()
            with conn:
                conn.sendall(b"pong")
                _reply_over_tcp(client)


def _status(argv: list[str]) -> str | None:
    import subprocess

    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return None if done.returncode == 0 else f"status-{done.returncode}"


def op_child_py(path: str) -> str | None:
    code = "import sys\nwith open(sys.argv[1], 'rb') as f: f.read(1)"
    return _status([sys.executable, "-I", "-S", "-c", code, path])


def op_child_cat(path: str) -> str | None:
    return _status(["/bin/cat", path])


def op_child_py_write(path: str) -> str | None:
    code = "import sys\nwith open(sys.argv[1], 'ab') as f: f.write(b'x')"
    return _status([sys.executable, "-I", "-S", "-c", code, path])


def op_child_env(name: str) -> str | None:
    code = "import os, sys\nsys.exit(0 if sys.argv[1] in os.environ else 3)"
    return _status([sys.executable, "-I", "-S", "-c", code, name])


def op_exec(path: str) -> str | None:
    return _status([path])


def op_import(name: str) -> None:
    __import__(name)


def op_sqlite_ro_uri(path: str) -> None:
    import sqlite3

    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        db.execute("select count(*) from t").fetchone()
    db.close()


def op_sqlite_write(path: str) -> None:
    import sqlite3

    db = sqlite3.connect(path)
    try:
        db.execute("insert into t values (2)")
        db.commit()
    finally:
        db.close()


def op_wait_then_read(path: str) -> None:
    _ready()
    sys.stdin.readline()
    _read(path)


def op_copy(source: str, target: str) -> None:
    with open(source, "rb") as handle:
        data = handle.read()
    with open(target, "wb") as handle:
        handle.write(data)


def _why(exc: BaseException) -> str:
    name = errno.errorcode.get(getattr(exc, "errno", None) or -1)
    return name or type(exc).__name__


def outcome_of(op: "object", args: "list[str]") -> str:
    """The ``OUTCOME`` line of ``op(*args)``."""

    try:
        refused = op(*args)  # type: ignore[operator]
    except Exception as exc:
        refused = _why(exc)
    return "OUTCOME allowed" if refused is None else f"OUTCOME refused {refused}"


def in_worker(rules: str, provider: str, name: str, args: "list[str]") -> None:
    """``--worker``: OP in a partial-mode worker under RULES (the host, this process, is not
    sandboxed). The operation and what it uses are this module's functions, shipped to the
    worker by value (``__main__``'s); the modules they name are imported there as the
    program's, judged by ``python-import`` as under the command line."""

    from pysandboxes import ConfigError, sandbox, sandboxes

    op = globals().get("op_" + name)
    if op is None:
        sys.exit(f"probe: unknown operation {name!r}")
    run = sandbox(outcome_of)
    try:
        with sandboxes(rules=rules, os_sandbox=provider, py_sandbox="true"):
            line = run(op, args)
    except ConfigError as exc:  # as the command line says it: nothing ran
        for text in str(exc).splitlines():
            sys.stderr.write(f"python-sb: {text}\n")
        sys.stderr.write("python-sb: nothing was run\n")
        sys.exit(2)
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


#: Guarded evaluation's column (issue 24 item 8): the operations evaluated source can perform
#: -> (source, its eval-* lines). Only imports: the eval-* language refuses to grant evaluated
#: code what files, the network and the environment are reached through (``open``, ``os``,
#: ``socket``: "cannot be granted to evaluated code", docs/eval.md), so those cases do not
#: apply to it.
EVAL_OPS = {"import": ("import {a0}\n", ("eval-syntax=import", "eval-import={a0}"))}


def eval_lines(name: str, args: "list[str]") -> "list[str]":
    """The eval-* lines of OP's source (``EVAL_OPS``), filled with its arguments."""

    values = {f"a{i}": arg for i, arg in enumerate(args)}
    return ["eval-timeout=20s", *(item.format(**values) for item in EVAL_OPS[name][1])]


def in_eval_here(name: str, args: "list[str]") -> None:
    """``--eval-here`` (under python-sb, whose rule file holds the eval-* lines): OP's source
    evaluated by ``guarded_eval`` in the worker the guard forks from this program."""

    from pysandboxes import guarded_eval

    values = {f"a{i}": arg for i, arg in enumerate(args)}
    try:
        guarded_eval(EVAL_OPS[name][0].format(**values), mode="exec")
        refused = None
    except Exception as exc:
        refused = _why(exc)
    line = "OUTCOME allowed" if refused is None else f"OUTCOME refused {refused}"
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def in_eval(rules: str, provider: str, name: str, args: "list[str]") -> None:
    """``--eval``: OP as source evaluated by ``guarded_eval`` in its worker (a partial-mode
    worker of the kind ``eval-worker``), whose rule file holds RULES' lines, ``os-sandbox=
    PROVIDER``, ``py-sandbox=true`` and the eval-* lines the source needs."""

    from pysandboxes import ConfigError, guarded_eval
    from pysandboxes.errors import EvalWorkerError

    values = {f"a{i}": arg for i, arg in enumerate(args)}
    with open(rules, encoding="utf-8") as handle:
        lines = [ln.strip() for ln in handle if ln.strip() and not ln.startswith("#")]
    lines += [f"os-sandbox={provider}", "py-sandbox=true", *eval_lines(name, args)]
    source = EVAL_OPS[name][0]
    refused: str | None = None
    try:
        guarded_eval(source.format(**values), mode="exec", rules=lines)
    except (ConfigError, EvalWorkerError) as exc:
        if isinstance(exc, EvalWorkerError) and not isinstance(exc.__cause__, ConfigError):
            raise
        for text in str(exc).splitlines():  # as the command line says it: nothing ran
            sys.stderr.write(f"python-sb: {text}\n")
        sys.stderr.write("python-sb: nothing was run\n")
        sys.exit(2)
    except Exception as exc:
        refused = _why(exc)
    line = "OUTCOME allowed" if refused is None else f"OUTCOME refused {refused}"
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> None:
    if sys.argv[1] == "--eval-here":
        in_eval_here(sys.argv[2], sys.argv[3:])
        return
    if sys.argv[1] == "--eval":
        in_eval(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
        return
    if sys.argv[1] == "--worker":
        in_worker(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
        return
    op = globals().get("op_" + sys.argv[1])
    if op is None:
        sys.exit(f"probe: unknown operation {sys.argv[1]!r}")
    try:
        refused = op(*sys.argv[2:])
    except Exception as exc:
        refused = _why(exc)
    line = "OUTCOME allowed" if refused is None else f"OUTCOME refused {refused}"
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
