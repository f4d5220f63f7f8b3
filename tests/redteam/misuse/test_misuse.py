"""The misuse corpus: every attack in ``attacks/`` runs twice.

1. Without the sandbox (plain python3): it must reach its objective -- the control, which
   proves the attack is real on this machine.
2. Under ``python-sb --os-sandbox=subprocess`` with the rules of its header (the Python layer
   on): it must not. ``# expect: KIND EXCEPTION`` says which refusal stops it (checked through
   ``pysandboxes.sandbox_denials`` and the exception type); ``# expect: absent [KIND]`` means
   the objective is simply out of reach (a hidden name, a variable the launcher never passed),
   and when a kind is given the ``--denials`` file must hold a refusal of that kind.

``# until: X.Y TEXT``: the attack exists before CPython X.Y only (TEXT says what CPython changed);
from X.Y on the control must fail to reach the objective and the sandboxed run too.

The world each attack sees (cwd = the project): ``data.txt``, ``.env``, ``a/b/``, a symbolic
link ``link_to_secret`` to ``../outside/secret.txt``; ``port.txt`` (a TCP listener on
127.0.0.1), ``port2.txt`` (one on 127.0.0.2), ``udp_port.txt``; ``name.txt`` (a host name from
``/etc/hosts``, resolved without any DNS query); ``../outside/sock`` (a Unix socket listener);
``payload.marshal``. No traffic leaves the loopback interface.
"""

from __future__ import annotations

import ast
import json
import marshal
import os
import shutil
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import base_env, loopback_host_name, require, run_python, run_sb

ATTACKS_DIR = Path(__file__).parent / "attacks"
ATTACKS = sorted(p for p in ATTACKS_DIR.glob("*.py") if not p.name.startswith("_"))


def _header(path: Path) -> tuple[list[str], str, tuple[int, ...] | None]:
    rules: list[str] = []
    expect = ""
    until = None
    for line in path.read_text().splitlines():
        if line.startswith("# rule: "):
            rules.append(line[len("# rule: ") :])
        elif line.startswith("# expect: "):
            expect = line[len("# expect: ") :]
        elif line.startswith("# until: "):
            until = tuple(int(n) for n in line.split()[2].split("."))
    return rules, expect, until


def _serve_tcp(host: str) -> tuple[socket.socket, int]:
    server = socket.socket()
    server.bind((host, 0))
    server.listen(64)

    def loop() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.close()

    threading.Thread(target=loop, daemon=True).start()
    return server, server.getsockname()[1]


@pytest.fixture(scope="module")
def listeners(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    tcp1, port1 = _serve_tcp("127.0.0.1")
    tcp2, port2 = _serve_tcp("127.0.0.2")
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    sock_dir = tmp_path_factory.mktemp("unix")
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(sock_dir / "sock"))
    unix.listen(64)

    def accept_unix() -> None:
        while True:
            try:
                conn, _ = unix.accept()
            except OSError:
                return
            conn.close()

    threading.Thread(target=accept_unix, daemon=True).start()
    yield {"port": port1, "port2": port2, "udp": udp.getsockname()[1], "unix": sock_dir / "sock"}
    for sock in (tcp1, tcp2, udp, unix):
        sock.close()


@pytest.fixture
def world(tmp_path: Path, listeners: dict[str, object]) -> dict[str, Path]:
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    (project / "a" / "b").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("the secret\n")
    (project / "data.txt").write_text("data\n")
    (project / ".env").write_text("TOKEN=abc\n")
    (project / "link_to_secret").symlink_to("../outside/secret.txt")
    (project / "port.txt").write_text(str(listeners["port"]))
    (project / "port2.txt").write_text(str(listeners["port2"]))
    (project / "udp_port.txt").write_text(str(listeners["udp"]))
    (project / "name.txt").write_text(loopback_host_name() or "")
    (project / "payload.marshal").write_bytes(marshal.dumps(compile("1", "payload", "eval")))
    (outside / "sock").symlink_to(listeners["unix"])  # type: ignore[arg-type]
    shutil.copy(ATTACKS_DIR / "_harness.py", project / "_harness.py")
    return {"home": home, "project": project, "outside": outside, "tmp": tmp_path}


def _first_line(stdout: str) -> str:
    for line in stdout.splitlines():
        if line.startswith(("OBJECTIVE REACHED", "DENIED", "FAILED")):
            return line
    return ""


@pytest.mark.parametrize("attack", ATTACKS, ids=[p.stem for p in ATTACKS])
def test_attack(attack: Path, world: dict[str, Path]) -> None:
    rules, expect, until = _header(attack)
    closed = until is not None and sys.version_info[:2] >= until  # CPython itself stops it
    assert rules and expect, f"{attack.name}: header needs '# rule:' and '# expect:' lines"
    if attack.stem == "net_name_not_covered":
        require(loopback_host_name(), "no host name for 127.0.0.1 in /etc/hosts besides localhost")
    if attack.stem == "net_mapped_ipv6":
        require(socket.has_ipv6 and os.path.exists("/proc/net/if_inet6"), "IPv6 is disabled")
    project = world["project"]
    shutil.copy(attack, project / attack.name)
    rule_file = project / ".py-sandboxes"
    rule_file.write_text("# placeholder for the control run\n")
    env = base_env(world["home"], {"SECRET_TOKEN": "s3cr3t"})

    control = run_python([attack.name], cwd=project, env=env, timeout=30)
    if closed:
        assert _first_line(control.stdout).startswith("FAILED"), control.stdout + control.stderr
    else:
        assert _first_line(control.stdout) == "OBJECTIVE REACHED", (
            f"control run of {attack.name} did not reach its objective:\n"
            f"{control.stdout}\n{control.stderr}"
        )

    rule_file.write_text("\n".join([*rules, "python-import=_harness,pysandboxes", ""]))
    denials_file = world["tmp"] / "denials.jsonl"
    result = run_sb(
        ["--os-sandbox=subprocess", f"--denials={denials_file}", attack.name],
        cwd=project,
        env=env,
        timeout=30,
    )
    line = _first_line(result.stdout)
    assert not line.startswith("OBJECTIVE REACHED"), f"{attack.name} reached its objective"
    words = expect.split()
    if closed:
        assert line.startswith("FAILED"), f"{attack.name}:\n{result.stdout}\n{result.stderr}"
        return
    if words[0] == "absent":
        assert line.startswith("FAILED"), f"{attack.name}:\n{result.stdout}\n{result.stderr}"
        if len(words) > 1:
            logged = [json.loads(x) for x in denials_file.read_text().splitlines()]
            assert words[1] in {d["kind"] for d in logged}, logged
        return
    kind, exc_name = words
    assert result.returncode == 3 and line.startswith("DENIED"), (
        f"{attack.name}: expected a refusal\n{result.stdout}\n{result.stderr}"
    )
    _, raised, records = line.split(" ", 2)
    denials = ast.literal_eval(records)
    assert raised == exc_name, line
    assert denials[0]["kind"] == kind, denials
    logged = [json.loads(x) for x in denials_file.read_text().splitlines()]
    assert any(d["kind"] == kind for d in logged), logged
