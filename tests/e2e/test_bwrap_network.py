"""``net=`` rules end to end under bwrap and unshare: IN and OUT forwards, helpers cleaned up on
every exit path, statuses and signals unchanged, nothing started without rules."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.e2e.test_unshare_e2e import processes_with, provider_ok, wait_gone
from tests.helpers import PYTHON_SB, base_env, require_tool

PROGRAM = """
import os, signal, socket, sys, time
def on_term(signum, frame):
    os.write(1, b"caught %d\\n" % signum)
    sys.exit(3)
signal.signal(signal.SIGTERM, on_term)
mode = sys.argv[1]
if mode == "serve":
    srv = socket.socket()
    srv.bind(("127.0.0.1", int(sys.argv[2])))
    srv.listen()
    print("listening", flush=True)
    conn, _ = srv.accept()
    conn.sendall(b"from-sandbox")
    conn.close()
    sys.exit(4)
if mode == "fetch":
    with socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=5) as c:
        print("got", c.recv(20).decode(), flush=True)
    sys.exit(5)
print("ready", flush=True)
while True:
    time.sleep(1)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def helpers_of(tmp: Path) -> list[str]:
    """Live processes (not zombies) whose command line names a network work directory below
    ``tmp`` (``pysb-net-*``, where pasta's pid file lives): pasta and the holder."""

    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"{tmp}/pysb-net-" in cmdline and state != "Z":
            found.append(f"{entry}: {cmdline}")
    return found


def wait_no_helpers(tmp: Path, limit: float = 20.0) -> list[str]:
    import time

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if not helpers_of(tmp):
            return []
        time.sleep(0.05)
    return helpers_of(tmp)


@pytest.fixture
def setup(project: Path, home: Path, tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    require_tool("pasta", "passt")
    require_tool("nft", "nftables")
    (project / "prog.py").write_text(PROGRAM)
    (project / ".py-sandboxes").write_text("# the rules come from the command line\n")
    helper_tmp = tmp_path / "helper-tmp"
    helper_tmp.mkdir()
    # python-sb's own temporary directory (pasta's pid file lives there): lets the test find
    # the helpers of this run by their command line.
    env = base_env(home, {"TMPDIR": str(helper_tmp)})
    return project, env, helper_tmp


def start(provider: str, project: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            PYTHON_SB,
            f"--os-sandbox={provider}",
            "--py-sandbox=false",
            f"--expose-ro={project}",
            *[a for a in args if a.startswith("--")],
            "prog.py",
            *[a for a in args if not a.startswith("--")],
        ],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_in_rule_port_is_reachable_from_host_loopback(
    provider: str, setup: tuple[Path, dict[str, str], Path]
) -> None:
    provider_ok(provider)
    project, env, helper_tmp = setup
    port = free_port()
    proc = start(provider, project, env, f"--net=ALLOW|TCP|*|{port}|IN", "serve", str(port))
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first == "listening\n", proc.stderr.read() if proc.stderr else ""
    assert helpers_of(helper_tmp)  # control: pasta and the holder run while it does
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        assert client.recv(20) == b"from-sandbox"
    proc.communicate(timeout=30)
    assert proc.returncode == 4  # the program's status, through the supervising python-sb
    assert wait_no_helpers(helper_tmp) == []


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_out_rule_reaches_host_loopback_service(
    provider: str, setup: tuple[Path, dict[str, str], Path]
) -> None:
    provider_ok(provider)
    project, env, helper_tmp = setup
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        proc = start(
            provider, project, env, f"--net=ALLOW|TCP|127.0.0.1|{port}|OUT", "fetch", str(port)
        )
        conn, _ = server.accept()
        conn.sendall(b"from-host")
        conn.close()
        out, err = proc.communicate(timeout=30)
    finally:
        server.close()
    assert out == "got from-host\n", err
    assert proc.returncode == 5
    assert wait_no_helpers(helper_tmp) == []


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_helpers_end_when_python_sb_is_killed(
    provider: str, setup: tuple[Path, dict[str, str], Path]
) -> None:
    provider_ok(provider)
    project, env, helper_tmp = setup
    marker = f"marker-{uuid.uuid4().hex}"
    proc = start(
        provider,
        project,
        env,
        "--net=ALLOW|TCP|127.0.0.1|9|OUT",
        f"--env=PYSB_TEST_MARKER={marker}",
        "wait",
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    assert helpers_of(helper_tmp) and processes_with(marker)
    proc.kill()  # no cleanup code of python-sb runs
    proc.wait(timeout=30)
    assert wait_no_helpers(helper_tmp) == []
    assert wait_gone(marker) == []  # nor does the sandboxed program survive it


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_sigterm_reaches_the_program_with_network(
    provider: str, setup: tuple[Path, dict[str, str], Path]
) -> None:
    provider_ok(provider)
    project, env, helper_tmp = setup
    proc = start(provider, project, env, "--net=ALLOW|TCP|127.0.0.1|9|OUT", "wait")
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert "caught 15" in out
    assert proc.returncode == 3
    assert wait_no_helpers(helper_tmp) == []


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_no_rule_starts_no_helper(provider: str, setup: tuple[Path, dict[str, str], Path]) -> None:
    provider_ok(provider)
    project, env, helper_tmp = setup
    proc = start(provider, project, env, "wait")
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline() == "ready\n"
        assert helpers_of(helper_tmp) == []
    finally:
        proc.kill()
        proc.wait(timeout=30)
