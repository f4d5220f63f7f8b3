"""Running one cell of the conformance matrix and judging it.

A cell is (case, configuration). It gets its own file tree (:func:`build_tree`), a rule file made
of the base rules and the case's fragment, and one run of the real ``python-sb`` with
``--os-sandbox=`` and ``--py-sandbox=`` of the configuration. The probe's ``OUTCOME`` line (or, for
servers, what the host-side client got back) is the observed outcome; :func:`judge` compares its
class with the rules' answer and names the mismatch: a *silent widening* (the rules refuse, the
enforcer allows, nothing announced) or a *breakage* (the rules grant, the enforcer refuses,
nothing announced).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sysconfig
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import NamedTuple

from tests.conformance.cases import (
    ALLOWED,
    CONFIGS,
    EVAL_CONFIGS,
    LIMITS,
    NOT_RUN,
    REFUSED,
    WORKER_CONFIGS,
    Case,
)
from tests.conformance.remote import HTTP_PORT, TLS_PORT, World, in_world
from tests.helpers import PYTHON, PYTHON_SB, base_env, loopback_host_name

PROBE = Path(__file__).with_name("probe.py")
#: Every cell's host environment: granted or not depending on the case's rules.
HOST_ENV = {
    "FOO": "bar",
    "APP_NAME": "demo",
    "APP_MODE": "host",
    "APP_SECRET": "hidden",
    "SECRET_TOKEN": "tok-conformance",
    "AWS_SECRET_ACCESS_KEY": "AKIA-conformance",
}
RUN_TIMEOUT = 60.0
HOST_CLIENT_TIMEOUT = 5.0
UDP_CLIENT_TIMEOUT = 1.5
#: The outcome when nothing usable came back (a crash, a missing OUTCOME line).
NO_OUTCOME = "no-outcome"


def build_tree(root: Path) -> None:
    """The files every case's rules and operations name (``{T}`` is ``root``)."""

    def put(rel: str, text: str = "content\n") -> Path:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    (root / "prog").mkdir(parents=True, exist_ok=True)
    shutil.copy(PROBE, root / "prog" / "probe.py")
    put("home/.netrc", "machine example.com password hunter2\n")
    put("home/config.ini", "[app]\n")
    (root / "work").mkdir()
    put("ro/file.txt")
    put("ro/sub/deep.txt")
    put("ro/secret.env", "TOKEN=1\n")
    put("ro/clé.env", "TOKEN=2\n")  # a name not ASCII (files/ignore-name-escaped)
    os.symlink("file.txt", root / "ro" / "link_in")
    put("outside/secret.txt", "secret\n")
    os.symlink(root / "outside" / "secret.txt", root / "ro" / "link_out")
    put("rw/file.txt")
    put("rw/ro_sub/inner.txt")
    put("rw/ro_file.txt")
    put("rw/key.pem", "-----BEGIN PRIVATE KEY-----\n")
    put("rw/extra.rules", "# included by a case\n")
    os.symlink(root / "ro" / "file.txt", root / "rw" / "link_to_ro")
    put("ro2/other.txt")
    put("ro2/rw_sub/data.txt")
    put("real/file.txt")
    os.symlink(root / "real", root / "via_link")
    put("real2/f.txt")
    os.symlink(root / "real2" / "f.txt", root / "file_link")
    (root / "realrw").mkdir()
    os.symlink(root / "realrw", root / "rwlink")
    for directory in ("bin", "outside/bin"):
        executable = root / directory / "mytrue"
        executable.parent.mkdir(parents=True, exist_ok=True)
        executable.write_bytes(_true_binary())
        executable.chmod(0o755)
    # links that cross an exposure's border, both ways (a link outside leading in, a directory
    # link inside leading out, a link in the writable exposure to an outside file, a dangling
    # one whose target would be created outside)
    os.symlink(root / "ro" / "file.txt", root / "outside" / "link_to_ro")
    os.symlink(root / "outside", root / "ro" / "dirlink_out")
    os.symlink(root / "outside" / "secret.txt", root / "rw" / "link_out")
    os.symlink(root / "outside" / "created.txt", root / "rw" / "dangling")
    put("data/in.txt")
    (root / "out").mkdir()
    for rel in ("ro", "rw", "outside", "rw/ro_sub", "data"):
        (root / rel / "db.sqlite").write_bytes(_database())


@functools.cache
def _true_binary() -> bytes:
    return Path("/bin/true").read_bytes()


@functools.cache
def _database() -> bytes:
    """A small database (table ``t``, one row), built once: every tree gets a copy."""

    db = sqlite3.connect(":memory:")
    db.execute("create table t (x)")
    db.execute("insert into t values (1)")
    db.commit()
    data = db.serialize()
    db.close()
    return data


# -- host side: servers the program connects to, clients that reach its server -----------------


#: Host sides that serve OUT targets: the second loopback address each one serves too.
SERVER_KINDS = {
    "tcp-servers": "",
    "udp-servers": "",
    "tcp-servers-46": "::1",
    "tcp-servers-lo2": "127.0.0.2",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Servers:
    """Two TCP or UDP servers on the host's 127.0.0.1 that answer ``pong``."""

    def __init__(self, kind: str, ports: tuple[int, int] | None = None, also: str = "") -> None:
        """``also``: a second address served on the same ports (``::1``, ``127.0.0.2``)."""

        self.kind = kind
        self.socks: list[socket.socket] = []
        for port in ports or (0, 0):
            sock = self._bind(socket.AF_INET, "127.0.0.1", port)
            if also:  # the same port on another loopback address of the host
                family = socket.AF_INET6 if ":" in also else socket.AF_INET
                self._bind(family, also, int(sock.getsockname()[1]))
        self.ports = tuple(int(s.getsockname()[1]) for s in self.socks[:: 2 if also else 1])

    def _bind(self, family: int, address: str, port: int) -> socket.socket:
        kind = socket.SOCK_STREAM if self.kind == "tcp" else socket.SOCK_DGRAM
        sock = socket.socket(family, kind)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((address, port))
        if self.kind == "tcp":
            sock.listen(8)
        self.socks.append(sock)
        threading.Thread(target=self._serve, args=(sock,), daemon=True).start()
        return sock

    def _serve(self, sock: socket.socket) -> None:
        try:
            while True:
                if self.kind == "udp":
                    _, peer = sock.recvfrom(64)
                    if peer is None:  # shut down
                        return
                    sock.sendto(b"pong", peer)
                    continue
                conn, _ = sock.accept()
                with conn:
                    conn.settimeout(5)
                    try:
                        conn.recv(16)
                        conn.sendall(b"pong")
                    except OSError:
                        pass
        except OSError:  # closed: the cell is over
            return

    def close(self) -> None:
        for sock in self.socks:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


def _tcp_client(port: int) -> str | None:
    """Reach the program's server from the host: None on a ``pong``, else why not."""

    deadline = time.monotonic() + HOST_CLIENT_TIMEOUT
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=HOST_CLIENT_TIMEOUT) as c:
                c.sendall(b"ping")
                data = c.recv(16)
                return None if data == b"pong" else f"host-client-got-{data!r}"
        except OSError as exc:
            # A forward may take a moment to be in place: retry connection refusals briefly.
            if isinstance(exc, ConnectionRefusedError) and time.monotonic() < deadline - 4.5:
                time.sleep(0.05)
                continue
            return f"host-client-{type(exc).__name__}"


def _udp_client(port: int) -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(UDP_CLIENT_TIMEOUT)
        try:
            sock.sendto(b"ping", ("127.0.0.1", port))
            data, _ = sock.recvfrom(16)
            sock.sendto(b"ack", ("127.0.0.1", port))  # the program may end now
        except OSError as exc:
            return f"host-client-{type(exc).__name__}"
    return None if data == b"pong" else "host-client-bad-reply"


# -- effects on the host's files ----------------------------------------------------------------


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_ino, info.st_mtime_ns


def _rows(path: str) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(db.execute("select count(*) from t").fetchone()[0])
    finally:
        db.close()


def host_effect(op: list[str]) -> Callable[[], bool] | None:
    """For an operation that changes files, a check (made after the run) that the host's files
    changed: a write that lands in a sandbox's private copy (a tmpfs rebuilt by bwrap) did not
    reach its objective. None when there is nothing to check on the host."""

    name, args = op[0], op[1:]
    if name in ("write", "hardlink_write", "child_py_write"):
        target = args[0]
        if os.path.exists(target) and not os.path.isfile(target):
            return None  # a device (/dev/null): nothing to see
        before = _size(target)
        return lambda: _size(target) > before
    if name in ("create", "mkdir", "copy"):
        stamp = _stamp(args[-1])
        return lambda: os.path.lexists(args[-1]) and _stamp(args[-1]) != stamp
    if name == "chmod":
        return lambda: os.path.exists(args[0]) and os.stat(args[0]).st_mode & 0o777 == 0o640
    if name == "symlink_create":
        return lambda: os.path.islink(args[1])
    if name in ("remove", "rmdir"):
        return lambda: not os.path.lexists(args[0])
    if name == "rename":
        return lambda: os.path.lexists(args[1]) and not os.path.lexists(args[0])
    if name == "sqlite_write":
        before_rows = _rows(args[0])
        return lambda: _rows(args[0]) > before_rows
    return None


# -- one run -----------------------------------------------------------------------------------


class Run(NamedTuple):
    """What one ``python-sb`` run gave."""

    argv: list[str]
    outcome: str
    detail: str
    announcements: list[str]
    output: str
    returncode: int | None


def substitute(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


def placeholder_values(
    tree: Path, ports: tuple[int, int], world: World | None = None
) -> dict[str, str]:
    """The placeholders of a cell (see ``cases.py``); ``{G}`` and ``{R}`` are the remote host's
    addresses for ``granted.test`` and ``refused.test`` when the case has one (``world``)."""

    remote = {"G": world.granted, "R": world.refused} if world is not None else {}
    return {
        **remote,
        "T": str(tree),
        "P": str(ports[0]),
        "Q": str(ports[1]),
        "NAME": loopback_host_name() or "no-loopback-name-in-etc-hosts",
        "STDLIB": sysconfig.get_paths()["stdlib"],
        "U": host_tmp_name(tree),
        "HOSTPID": str(os.getpid()),  # a host process of the same user: the test's own
    }


def host_tmp_name(tree: Path) -> str:
    """A name of the cell's own in the host's ``/tmp`` (``{U}``), for the cases that try to
    write there; :func:`remove_host_tmp` removes what a run left."""

    digest = hashlib.sha256(str(tree).encode()).hexdigest()[:16]
    return f"pysb-conformance-{digest}"


def remove_host_tmp(tree: Path) -> None:
    path = Path("/tmp") / host_tmp_name(tree)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with suppress(FileNotFoundError):
            path.unlink()


def base_rules(case: Case) -> list[str]:
    rules = []
    if case.script_exposed:
        rules.append("expose-ro={T}/prog")
    if not any(r.startswith("python-import=") for r in case.rules):
        rules.append("python-import=*")
    else:  # the probe's own modules, so that the case's import list is what is judged
        rules.append("python-import=os,sys,errno")
    return rules


def write_rules(case: Case, values: dict[str, str]) -> Path:
    path = Path(substitute(case.config, values))
    lines = [substitute(r, values) for r in (*base_rules(case), *case.rules)]
    path.write_text("\n".join(lines) + "\n")
    return path


def cell_env(tree: Path) -> dict[str, str]:
    return base_env(tree / "home", HOST_ENV)


def _is_python_sb_line(line: str) -> bool:
    return line.startswith(("python-sb:", "python-sb (", "python-sb "))


def enter_world(tree: Path, world: World | None) -> None:
    """Give the probe the remote host's CA (``prog/ca.pem``, beside it), when there is one."""

    if world is not None:
        shutil.copy(world.ca, tree / "prog" / "ca.pem")


def in_world_of(argv: list[str], world: World | None) -> list[str]:
    """``argv`` as it runs for a cell: in the remote host's world (its names in ``/etc/hosts``
    of a mount namespace of its own) when the case has one."""

    return argv if world is None else in_world(world, argv)


def run_program(
    argv: list[str],
    case: Case,
    values: dict[str, str],
    cwd: str,
    env: dict[str, str],
    world: World | None = None,
) -> Run:
    """Run ``argv`` (python-sb or python3 on the probe), playing the host side of ``case``;
    in the remote host's world when ``world`` is given."""

    effect = host_effect([substitute(w, values) for w in case.op])
    proc = subprocess.Popen(
        in_world_of(argv, world),
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream: an announcement is seen *before* the output
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    lines: list[str] = []
    host_refusal: str | None = None
    outcome_line = ""
    deadline = time.monotonic() + RUN_TIMEOUT
    try:
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("OUTCOME "):
                outcome_line = line.strip()
                break
            if line.strip() == "READY":
                host_refusal = _host_action(case, values, proc)
                if host_refusal is not None:
                    break
            if time.monotonic() > deadline:
                break
    finally:
        if host_refusal is not None and proc.poll() is None:
            _kill(proc)  # the program still waits for the client that could not reach it
        try:
            rest, _ = proc.communicate(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            _kill(proc)
            rest, _ = proc.communicate()
        lines.extend(rest.splitlines(keepends=True))
    output = "".join(lines)
    if not outcome_line:
        outcome_line = next((ln.strip() for ln in lines if ln.startswith("OUTCOME ")), "")
    first_output = next(
        (i for i, ln in enumerate(lines) if ln.startswith(("OUTCOME ", "READY"))), len(lines)
    )
    announcements = [ln.rstrip("\n") for ln in lines[:first_output] if _is_python_sb_line(ln)]
    outcome, detail = _classify(outcome_line, host_refusal, proc.returncode, output)
    if outcome == ALLOWED and effect is not None and not effect():
        outcome, detail = REFUSED, "the program saw success, but the host's files did not change"
    return Run(in_world_of(argv, world), outcome, detail, announcements, output, proc.returncode)


def _kill(proc: subprocess.Popen[str]) -> None:
    """End the run: its whole session (python-sb starts none of its own for the program)."""

    with suppress(ProcessLookupError):
        os.killpg(proc.pid, 9)


def _host_action(case: Case, values: dict[str, str], proc: subprocess.Popen[str]) -> str | None:
    """The host side once the program is READY: None when its objective was reached (or is
    judged by the program itself), else why not."""

    assert proc.stdin is not None
    target = substitute(case.op[-1], values)
    if case.host == "tcp-client":
        return _tcp_client(int(target))
    if case.host == "udp-client":
        return _udp_client(int(target))
    if case.host == "create-after-start":
        Path(target).write_text("created after start\n")
        proc.stdin.write("go\n")
        proc.stdin.flush()
        return None
    return None


def _classify(
    outcome_line: str, host_refusal: str | None, returncode: int | None, output: str
) -> tuple[str, str]:
    if host_refusal is not None:
        return REFUSED, host_refusal
    if outcome_line == "OUTCOME allowed":
        return ALLOWED, ""
    if outcome_line.startswith("OUTCOME refused"):
        return REFUSED, outcome_line.split(" ", 2)[2] if outcome_line.count(" ") >= 2 else ""
    if returncode == 2 and "python-sb: nothing was run" in output:
        return NOT_RUN, "python-sb refused the configuration"
    return NO_OUTCOME, f"exit status {returncode}, no OUTCOME line"


def sb_argv(config: str, rules: Path, op: list[str], tree: Path) -> list[str]:
    provider, py = CONFIGS[config]
    return [
        PYTHON_SB,
        f"--pysandboxes-config={rules}",
        f"--os-sandbox={provider}",
        f"--py-sandbox={'true' if py else 'false'}",
        str(tree / "prog" / "probe.py"),
        *op,
    ]


@contextmanager
def host_side(case: Case, ports: tuple[int, int] | None = None) -> Iterator[tuple[int, int]]:
    """The host servers of an OUT case (on ``ports`` when given), the remote host's HTTPS and
    HTTP ports for a ``remote`` case (its servers run for the whole session:
    ``remote.other_machine``), or two free ports."""

    if case.host == "remote":
        yield (TLS_PORT, HTTP_PORT)
    elif case.host in SERVER_KINDS:
        servers = _Servers(case.host[:3], ports, SERVER_KINDS[case.host])
        try:
            yield (servers.ports[0], servers.ports[1])
        finally:
            servers.close()
    else:
        yield ports or (free_port(), free_port())


def explain_warnings(
    argv: list[str], cwd: str, env: dict[str, str], world: World | None = None
) -> list[str]:
    """``--explain --json`` warnings and provider notices for the same command line (argv of
    :func:`sb_argv`), in the remote host's world when the case has one (python-sb resolves
    the rules' names for --explain too)."""

    done = subprocess.run(
        in_world_of([argv[0], "--explain", "--json", *argv[1:]], world),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    try:
        data = json.loads(done.stdout)
    except ValueError:
        return []
    # the warnings, and the provider's notices (providers/limits.py: the announced limits and
    # the enforced differences worth knowing, which --explain prints and a run does not)
    limits = data.get("provider", {}).get("limits", [])
    return [str(w) for w in data.get("warnings", [])] + [str(item["text"]) for item in limits]


def learn(case: Case, tree: Path, values: dict[str, str]) -> tuple[Path, Run]:
    """``--learn`` the case's program (no rule file yet): the learned file and the learning run."""

    learned = tree / "learned.py-sandboxes"
    argv = [
        PYTHON_SB,
        f"--pysandboxes-config={learned}",
        "--learn",
        str(tree / "prog" / "probe.py"),
        *[substitute(w, values) for w in case.op],
    ]
    run = run_program(argv, case, values, substitute(case.cwd, values), cell_env(tree))
    return learned, run


# -- judging -----------------------------------------------------------------------------------


class Verdict(NamedTuple):
    ok: bool
    message: str


def expected_outcome(case: Case, config: str) -> tuple[str, str | None]:
    """The rules' outcome, and the limit that applies in ``config`` (if any)."""

    for name in case.limits:
        if config in LIMITS[name].configs:
            return case.expect, name
    return case.expect, None


def announced(limit: str, lines: list[str]) -> str | None:
    words = [w.lower() for w in LIMITS[limit].announce]
    for line in lines:
        if all(w in line.lower() for w in words):
            return line
    return None


def judge(case: Case, config: str, run: Run, warnings: list[str] | None) -> Verdict:
    """Compare the observed class with the rules' one; name the kind of any mismatch.

    ``warnings``: ``--explain --json`` warnings, fetched only when a limit's announcement was
    not on stderr (None: not fetched)."""

    expect, limit_name = expected_outcome(case, config)
    observed = run.outcome
    if observed == expect or (expect == REFUSED and observed == NOT_RUN):
        # A clean refusal to run keeps the objective out of reach: not a widening.
        return Verdict(True, "")
    if limit_name is not None and observed == LIMITS[limit_name].outcome:
        limit = LIMITS[limit_name]
        line = announced(limit_name, run.announcements) or announced(limit_name, warnings or [])
        if line is not None:
            return Verdict(True, f"announced limit {limit_name}: {line}")
        kind = "SILENT WIDENING" if observed == ALLOWED else "BREAKAGE"
        return Verdict(
            False,
            f"{kind} (documented limit '{limit_name}', NOT announced at start): the rules say "
            f"{expect}, this configuration gave {observed}; no python-sb line before the output "
            f"nor --explain --json warning holds {limit.announce} ({limit.doc})",
        )
    if observed == ALLOWED:
        kind = "SILENT WIDENING: the rules refuse it, the enforcer allowed it"
    elif expect == ALLOWED and observed in (REFUSED, NOT_RUN):
        kind = f"BREAKAGE: the rules grant it, the enforcer gave {observed}"
    else:
        kind = f"NO OUTCOME: the rules say {expect}, the program reported nothing usable"
    said = "; announced at start: " + " | ".join(run.announcements) if run.announcements else ""
    return Verdict(False, f"{kind} ({run.detail}){said}")


def describe(case: Case, config: str, run: Run, rules_text: str) -> str:
    rules_text = "".join(
        f"  {line}\n"
        for line in rules_text.splitlines()
        if line.strip() and not line.startswith("#")
    )
    return (
        f"cell {case.id}@{config} — {case.why}\n"
        f"rules:\n{rules_text}"
        f"command: {' '.join(run.argv)}\n"
        f"observed: {run.outcome} {run.detail}\n"
        f"output:\n{run.output}"
    )


def worker_argv(config: str, rules: Path, op: list[str], tree: Path) -> list[str]:
    """An entry-point cell (``WORKER_CONFIGS``): the operation as a ``@sandbox`` function in a
    worker under ``rules`` plus the provider and the Python layer of its column."""

    if config in EVAL_CONFIGS:
        provider = CONFIGS[EVAL_CONFIGS[config]][0]
        return [PYTHON, str(tree / "prog" / "probe.py"), "--eval", str(rules), provider, *op]
    provider = CONFIGS[WORKER_CONFIGS[config]][0]
    return [PYTHON, str(tree / "prog" / "probe.py"), "--worker", str(rules), provider, *op]


def control_argv(tree: Path, op: list[str]) -> list[str]:
    return [PYTHON, str(tree / "prog" / "probe.py"), *op]
