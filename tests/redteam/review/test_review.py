"""Independent red-team review of the Python layer (issue 4): attacks in ``attacks/``.

Every attack runs twice, each time in a fresh copy of the same small world:

1. ``test_control``: plain python3, no sandbox -- it must reach its objective (the attack is
   real on this machine);
2. ``test_sandboxed``: the real ``python-sb --os-sandbox=subprocess`` (Python layer on, no
   kernel layer) with the rules of the attack's header -- it must not.

Header lines of an attack:

- ``# rule: LINE`` -- a line of the rule file (``python-import=_harness`` is added);
- ``# rulefile: PATH`` -- where the rule file goes, relative to the project (default
  ``.py-sandboxes``);
- ``# expect: KIND BUILTIN`` -- refused by a python-sb refusal: the exception is a
  ``SandBoxError`` and a ``BUILTIN``, ``sandbox_denials`` starts with a record of ``KIND``, and
  the ``--denials`` file holds one; ``# expect: absent [KIND]`` -- the objective is out of reach
  without an exception reaching the program (and, with KIND, a refusal of KIND was logged);
  ``# expect: chain KIND BUILTIN`` -- as the first form, for a library that catches the refusal
  and raises its own ``BUILTIN`` from it (the record is still found in the chain);
- ``# bypass: TEXT`` -- a hole found by this review: the sandboxed test is
  ``xfail(strict=True)`` so that the suite stays green while the hole is tracked, and turns
  red (XPASS) the day the guard stops it -- then drop the line;
- ``# bypass-since: X.Y TEXT`` -- the same, for a hole that opens only from CPython X.Y on (the
  suites run under every supported CPython, see scripts/test.sh);
- ``# until: X.Y TEXT`` -- the attack exists before CPython X.Y only (TEXT: what CPython changed,
  e.g. a module removed): from X.Y on, the control must *fail* to reach the objective (the
  interpreter itself closes it) and the sandboxed run must not reach it either; the ``expect``
  line then is not checked (the refusal never comes);
- ``# needs: hosts-name`` / ``ipv6`` / ``root`` / ``accelerator`` -- a precondition of the
  machine (``accelerator``: the compiled module built for this interpreter).

The world (cwd = ``project``): ``data.txt``, ``.env``, ``a/b/``, ``port.txt`` (TCP listener on
127.0.0.1 answering ``hello``), ``udp_port.txt`` (UDP echo on 127.0.0.1), ``name.txt`` (a name
that ``/etc/hosts`` maps to 127.0.0.1, no DNS query), ``shm.txt`` (the name of a POSIX
shared-memory object), ``sem.txt`` (the name of a POSIX named semaphore another process made:
the test's), ``victim_pid.txt`` (a ``sleep`` process of the test), ``usock.txt``
(the path of a Unix socket listener in a directory no rule exposes), ``clé.env`` (a name
not ASCII); ``../outside/`` holds
``secret.txt``, ``secret.db`` (SQLite), ``lib.zip`` (a module) and a file with a non-UTF-8
name. No packet leaves loopback.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import base_env, loopback_host_name, require, run_python, run_sb

ATTACKS_DIR = Path(__file__).parent / "attacks"
ATTACKS = sorted(p for p in ATTACKS_DIR.glob("*.py") if not p.name.startswith("_"))


class Bypass(AssertionError):
    """The sandboxed run reached the attack's objective (the only failure an xfail accepts)."""


def _header(path: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        if not line.startswith("# "):
            if line.strip():
                break
            continue
        key, sep, value = line[2:].partition(": ")
        if sep and key in (
            "rule",
            "rulefile",
            "expect",
            "bypass",
            "bypass-since",
            "until",
            "needs",
        ):
            found.setdefault(key, []).append(value)
    return found


def _params(kind: str) -> list[Any]:
    params = []
    for path in ATTACKS:
        marks = []
        header = _header(path)
        bypass = header.get("bypass") or [
            text
            for version, _, text in (line.partition(" ") for line in header.get("bypass-since", []))
            if sys.version_info[:2] >= tuple(int(n) for n in version.split("."))
        ]
        if kind == "sandboxed" and bypass:
            marks.append(
                pytest.mark.xfail(strict=True, raises=Bypass, reason="BYPASS: " + bypass[0])
            )
        params.append(pytest.param(path, id=path.stem, marks=marks))
    return params


def _closed_by_cpython(header: dict[str, list[str]]) -> bool:
    """Whether this interpreter is at or past the attack's ``until`` version."""

    return any(
        sys.version_info[:2] >= tuple(int(n) for n in line.partition(" ")[0].split("."))
        for line in header.get("until", [])
    )


def _ipv6() -> bool:
    return socket.has_ipv6 and os.path.exists("/proc/net/if_inet6")


@pytest.fixture(scope="module")
def listeners(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """TCP ``hello`` server and UDP echo on 127.0.0.1, a Unix ``hello`` server, a POSIX
    shared-memory object (``/dev/shm/NAME`` holding ``shmsecret``)."""

    servers: list[socket.socket] = []

    def serve(server: socket.socket) -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with contextlib.suppress(OSError):
                conn.sendall(b"hello")
            conn.close()

    def echo(server: socket.socket) -> None:
        while True:
            try:
                data, peer = server.recvfrom(2048)
                server.sendto(data, peer)
            except OSError:
                return

    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(64)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix_path = tmp_path_factory.mktemp("unexposed") / "usock"
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(unix_path))
    unix.listen(64)
    servers += [tcp, udp, unix]
    victim = subprocess.Popen(["sleep", "300"])  # another process, for process-control attacks
    shm = f"pysb-review-{os.getpid()}-{id(servers)}"
    Path("/dev/shm", shm).write_bytes(b"shmsecret")
    threading.Thread(target=serve, args=(tcp,), daemon=True).start()
    threading.Thread(target=echo, args=(udp,), daemon=True).start()
    threading.Thread(target=serve, args=(unix,), daemon=True).start()
    yield {
        "port": tcp.getsockname()[1],
        "udp": udp.getsockname()[1],
        "unix": str(unix_path),
        "shm": shm,
        "victim": victim.pid,
    }
    victim.kill()
    victim.wait()
    for server in servers:
        server.close()
    Path("/dev/shm", shm).unlink()


@pytest.fixture
def semaphore() -> Iterator[str]:
    """A named POSIX semaphore made by the test process (``/dev/shm/sem.NAME``), removed after
    the test unless an attack removed it: another program's, for the attacks."""

    import _multiprocessing

    name = f"/pysb-review-{os.getpid()}-{os.urandom(4).hex()}"
    lock = _multiprocessing.SemLock(1, 1, 1, name, False)  # kind SEMAPHORE, kept by name
    yield name
    del lock
    with contextlib.suppress(OSError):
        _multiprocessing.sem_unlink(name)


def _make_world(root: Path, attack: Path, listeners: dict[str, Any], semaphore: str = "") -> Path:
    project = root / "project"
    (project / "a" / "b").mkdir(parents=True)
    (project / "conf").mkdir()
    outside = root / "outside"
    outside.mkdir()
    (root / "home").mkdir()
    (outside / "secret.txt").write_text("the secret\n")
    os.close(os.open(os.fsencode(outside) + b"/secret\xff.txt", os.O_CREAT | os.O_WRONLY))
    with sqlite3.connect(outside / "secret.db") as db:
        db.execute("create table t(x)")
        db.execute("insert into t values ('dbsecret')")
    db.close()
    with zipfile.ZipFile(outside / "lib.zip", "w") as archive:
        archive.writestr("zsecret.py", "SECRET = 'zipsecret'\n")
    (project / "data.txt").write_text("data\n")
    (project / ".env").write_text("TOKEN=abc\n")
    (project / "clé.env").write_text("KEY=clé\n")
    (project / "port.txt").write_text(str(listeners["port"]))
    (project / "udp_port.txt").write_text(str(listeners["udp"]))
    (project / "usock.txt").write_text(listeners["unix"])
    (project / "name.txt").write_text(loopback_host_name() or "")
    (project / "shm.txt").write_text("/" + listeners["shm"])
    (project / "sem.txt").write_text(semaphore)
    (project / "victim_pid.txt").write_text(str(listeners["victim"]))
    shutil.copy(ATTACKS_DIR / "_harness.py", project / "_harness.py")
    shutil.copy(attack, project / attack.name)
    return project


def _report(stdout: str) -> dict[str, Any]:
    """The last ``RESULT`` line (an attack at shutdown reports after the harness)."""

    found: dict[str, Any] = {"result": "no report"}
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            found = json.loads(line[len("RESULT ") :])
    return found


def _preconditions(header: dict[str, list[str]]) -> None:
    for need in header.get("needs", []):
        if need == "hosts-name":
            require(loopback_host_name(), "no name for 127.0.0.1 in /etc/hosts besides localhost")
        elif need == "root":
            require(os.geteuid() == 0, "needs root (CAP_NET_RAW, /etc/shadow)")
        elif need == "ipv6":
            require(_ipv6(), "IPv6 is disabled")
        elif need == "accelerator":
            spec = importlib.util.find_spec("pysandboxes.guard._accelerator")
            require(spec is not None, "the compiled accelerator is not built (a C compiler)")
        else:
            raise AssertionError(f"unknown need {need!r}")


@pytest.mark.parametrize("attack", _params("control"))
def test_control(attack: Path, tmp_path: Path, listeners: dict[str, Any], semaphore: str) -> None:
    header = _header(attack)
    assert header.get("rule") and header.get("expect"), f"{attack.name}: incomplete header"
    _preconditions(header)
    project = _make_world(tmp_path, attack, listeners, semaphore)
    env = base_env(tmp_path / "home", {"SECRET_TOKEN": "s3cr3t"})
    result = run_python([attack.name], cwd=project, env=env, timeout=30)
    report = _report(result.stdout)
    if _closed_by_cpython(header):
        assert report["result"] == "failed", (
            f"{attack.name}: CPython {sys.version_info[:2]} was to close it ({header['until']}):"
            f"\n{result.stdout}\n{result.stderr}"
        )
        return
    assert report["result"] == "reached", (
        f"control run of {attack.name} did not reach its objective:\n"
        f"{result.stdout}\n{result.stderr}"
    )


@pytest.mark.parametrize("attack", _params("sandboxed"))
def test_sandboxed(attack: Path, tmp_path: Path, listeners: dict[str, Any], semaphore: str) -> None:
    header = _header(attack)
    _preconditions(header)
    project = _make_world(tmp_path, attack, listeners, semaphore)
    rule_file = project / header.get("rulefile", [".py-sandboxes"])[0]
    rule_file.write_text("\n".join([*header["rule"], "python-import=_harness", ""]))
    denials_file = tmp_path / "denials.jsonl"
    env = base_env(tmp_path / "home", {"SECRET_TOKEN": "s3cr3t"})
    result = run_sb(
        [
            "--os-sandbox=subprocess",
            f"--pysandboxes-config={rule_file}",
            f"--denials={denials_file}",
            attack.name,
        ],
        cwd=project,
        env=env,
        timeout=30,
    )
    report = _report(result.stdout)
    shown = f"{attack.name}:\n{result.stdout}\n{result.stderr}"
    if report["result"] == "reached":
        raise Bypass(f"reached its objective under python-sb: {shown}")
    logged = (
        [json.loads(line) for line in denials_file.read_text().splitlines()]
        if denials_file.exists()
        else []
    )
    words = header["expect"][0].split()
    if _closed_by_cpython(header):  # the interpreter stops it before any refusal is needed
        assert report["result"] == "failed", shown
        return
    if words[0] == "absent":
        assert report["result"] == "failed", shown
        if len(words) > 1:
            assert words[1] in {d["kind"] for d in logged}, logged
        return
    chained = words[0] == "chain"  # a library re-raised the refusal as its own exception
    kind, builtin = words[-2:]
    assert report["result"] == "denied" and result.returncode == 3, shown
    assert chained or report["sandbox_error"], f"not a SandBoxError: {shown}"
    assert builtin in report["builtins"], f"not a {builtin}: {shown}"
    assert report["denials"][0]["kind"] == kind, report["denials"]
    assert report["denials"][0]["target"], report["denials"]
    assert any(d["kind"] == kind for d in logged), logged


LEGIT_DIR = Path(__file__).parent / "legit"
LEGIT = sorted(LEGIT_DIR.glob("*.py"))


def _legit_params() -> list[Any]:
    params = []
    for path in LEGIT:
        marks = []
        for line in path.read_text().splitlines():
            if line.startswith("# false-positive: "):
                reason = "FALSE POSITIVE: " + line[len("# false-positive: ") :]
                marks.append(pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason))
        params.append(pytest.param(path, id=path.stem, marks=marks))
    return params


@pytest.mark.parametrize("program", _legit_params())
def test_legit(program: Path, tmp_path: Path, listeners: dict[str, Any]) -> None:
    """A legitimate program under the rules of its header runs to its end (prints LEGIT DONE)."""

    project = _make_world(tmp_path, program, listeners)
    rules = [
        line[len("# rule: ") :]
        for line in program.read_text().splitlines()
        if line.startswith("# rule: ")
    ]
    rule_file = project / ".py-sandboxes"
    rule_file.write_text("\n".join([*rules, ""]))
    env = base_env(tmp_path / "home")
    control = run_python([program.name], cwd=project, env=env, timeout=30)
    assert "LEGIT DONE" in control.stdout, control.stderr
    result = run_sb(
        ["--os-sandbox=subprocess", f"--pysandboxes-config={rule_file}", program.name],
        cwd=project,
        env=env,
        timeout=30,
    )
    assert "LEGIT DONE" in result.stdout and result.returncode == 0, (
        f"{program.name}:\n{result.stdout}\n{result.stderr}"
    )
