"""The namespace providers' isolation, checked by running their real command (bwrap, or the
unshare setup step) around a real interpreter, without the launcher.

One sandboxed program probes many things at once and prints JSON; each probe has its control
(the same probe without the sandbox, or the same path on the host).
``test_unshare_provider.py`` reuses :func:`run_in` for ``os-sandbox=unshare``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pysandboxes.policy.model import ARG, PathRule, Policy
from pysandboxes.providers import get_provider
from pysandboxes.providers.base import Launch, Prepared
from pysandboxes.runtime import RunContext
from tests.helpers import require, require_tool

PROBE = r"""
import errno, json, os, socket, sys
def t(f):
    try:
        r = f()
        return "ok" if r is None or not isinstance(r, (str, list, int)) else r
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
out = {}
out["ignored_file"] = t(lambda: os.stat(".env") and None)
out["ignored_nested"] = t(lambda: os.stat("sub/key.pem") and None)
out["listing"] = sorted(os.listdir("."))
out["listing_sub"] = sorted(os.listdir("sub"))
out["read_exposed"] = t(lambda: open("data.txt").read())
out["write_rw"] = t(lambda: open("out/result.txt", "w").write("written") and None)
out["write_ro"] = t(lambda: open("data.txt", "a") and None)
out["write_rules"] = t(lambda: open("out/.py-sandboxes", "a") and None)
out["hidden_host"] = t(lambda: os.stat(sys.argv[1]) and None)
out["etc_shadow"] = t(lambda: os.stat("/etc/shadow") and None)
out["write_usr"] = t(lambda: open("/usr/pysb-probe", "w") and None)
# Opened for writing only (nothing written): host-wide sysctls must stay out of reach.
out["proc_sys"] = t(lambda: os.close(os.open("/proc/sys/vm/drop_caches", os.O_WRONLY)))
out["proc_sysrq"] = t(lambda: os.close(os.open("/proc/sysrq-trigger", os.O_WRONLY)))
out["tmp"] = sorted(os.listdir("/tmp"))
out["tmpdir_write"] = t(lambda: open(os.path.join(sys.argv[2], "t"), "w").write("t") and None)
out["pid"] = os.getpid()
out["ppid_visible"] = t(lambda: os.stat(f"/proc/{sys.argv[3]}") and None)
out["hostname"] = socket.gethostname()
out["env"] = sorted(os.environ)
status = open("/proc/self/status").read()
out["nnp"] = [l.split()[1] for l in status.splitlines() if l.startswith("NoNewPrivs")][0]
out["seccomp"] = [l.split()[1] for l in status.splitlines() if l.startswith("Seccomp:")][0]
out["session_inside"] = os.getsid(0) != 0  # 0: the session leader is outside
s = socket.socket()
out["tcp_host_port"] = t(lambda: s.connect(("127.0.0.1", int(sys.argv[4]))))
out["ifaces"] = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else "nosys"
out["ipc_ns"] = os.readlink("/proc/self/ns/ipc")
print(json.dumps(out))
"""


def make_project(tmp_path: Path) -> dict[str, Path]:
    proj = tmp_path / "proj"
    (proj / "sub").mkdir(parents=True)
    (proj / "out").mkdir()
    (proj / ".env").write_text("SECRET=1")
    (proj / "sub" / "key.pem").write_text("key")
    (proj / "sub" / "keep.txt").write_text("keep")
    (proj / "data.txt").write_text("data")
    (proj / "out" / ".py-sandboxes").write_text("# rules\n")
    hidden = tmp_path / "not-exposed.txt"
    hidden.write_text("host only")
    tmpdir = tmp_path / "runtmp"
    tmpdir.mkdir()
    return {"proj": proj, "hidden": hidden, "tmpdir": tmpdir}


def run_in(
    provider: str,
    policy: Policy,
    code: str,
    args: list[str],
    *,
    cwd: Path,
    tmpdir: Path,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Prepare ``provider`` for ``python -c code args`` and run what it returns, as the
    launcher does (pre_exec in the child, cleanup afterwards)."""

    impl = get_provider(provider)
    available = impl.availability()
    require(available.ok, f"os-sandbox={provider}: {available.reason} ({available.install_hint})")
    ctx = RunContext(
        provider=provider,
        cwd=str(cwd),
        tmpdir=str(tmpdir),
        python=sys.executable,
        prefixes=(sys.prefix, sys.base_prefix),
    )
    launch = Launch(
        policy,
        ctx,
        (sys.executable, "-I", "-c", code, *args),
        env if env is not None else {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "ONLY": "1"},
        cwd=str(cwd),
    )
    prepared: Prepared = impl.prepare(launch)
    try:
        return launch_like_python_sb(prepared, input=input, timeout=timeout)
    finally:
        relay_fd = -1
        if prepared.relay is not None:
            relay_fd = prepared.relay.info_fd
            prepared.relay.close()  # closes its own descriptors
        for fd in prepared.pass_fds:
            if fd not in launch.pass_fds and fd != relay_fd:
                os.close(fd)
        for step in prepared.cleanup:
            step()


def launch_like_python_sb(
    prepared: Prepared, *, input: str | None, timeout: float
) -> subprocess.CompletedProcess[str]:
    """What the launcher does: fork, run ``pre_exec`` in the child, ``execve``. (Not
    ``subprocess``: a ``pre_exec`` may turn the forked process into the sandbox's waiting
    parent, which ``subprocess``'s ``preexec_fn`` does not allow.)"""

    import tempfile
    import time

    with (
        tempfile.TemporaryFile() as stdin,
        tempfile.TemporaryFile() as stdout,
        tempfile.TemporaryFile() as stderr,
    ):
        stdin.write((input or "").encode())
        stdin.seek(0)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                os.dup2(stdin.fileno(), 0)
                os.dup2(stdout.fileno(), 1)
                os.dup2(stderr.fileno(), 2)
                for fd in prepared.pass_fds:
                    os.set_inheritable(fd, True)
                for step in prepared.pre_exec:
                    step()
                os.execve(prepared.argv[0], prepared.argv, prepared.env)
            finally:
                os._exit(127)
        deadline = time.monotonic() + timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                raise subprocess.TimeoutExpired(prepared.argv, timeout)
            time.sleep(0.01)
        stdout.seek(0)
        stderr.seek(0)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        return subprocess.CompletedProcess(
            prepared.argv, code, stdout.read().decode(), stderr.read().decode()
        )


def isolation_policy(paths: dict[str, Path]) -> Policy:
    proj = paths["proj"]
    return Policy(
        expose_ro=(PathRule("expose-ro", str(proj), ARG),),
        expose_rw=(PathRule("expose-rw", str(proj / "out"), ARG),),
        ignore=(PathRule("ignore", ".env", ARG), PathRule("ignore", "*.pem", ARG)),
        rule_files=(str(proj / "out" / ".py-sandboxes"),),
    )


def check_isolation(provider: str, tmp_path: Path) -> None:
    paths = make_project(tmp_path)
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    args = [str(paths["hidden"]), str(paths["tmpdir"]), str(os.getpid()), str(port)]
    try:
        # Control: the same probe without a sandbox reaches everything.
        control = subprocess.run(
            [sys.executable, "-I", "-c", PROBE, *args],
            cwd=paths["proj"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert control.returncode == 0, control.stderr
        host = json.loads(control.stdout)
        assert host["ignored_file"] == "ok" and host["hidden_host"] == "ok"
        assert host["tcp_host_port"] == "ok" and host["ppid_visible"] == "ok"
        (paths["proj"] / "out" / "result.txt").unlink()

        result = run_in(
            provider,
            isolation_policy(paths),
            PROBE,
            args,
            cwd=paths["proj"],
            tmpdir=paths["tmpdir"],
        )
    finally:
        listener.close()
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert got["ignored_file"] == "ENOENT"
    assert got["ignored_nested"] == "ENOENT"
    assert ".env" not in got["listing"] and "key.pem" not in got["listing_sub"]
    assert "keep.txt" in got["listing_sub"] and "data.txt" in got["listing"]
    assert got["read_exposed"] == "data"
    assert got["write_rw"] == "ok"
    assert (paths["proj"] / "out" / "result.txt").read_text() == "written"
    assert got["write_ro"] == "EROFS"
    assert got["write_rules"] == "EROFS"
    assert got["hidden_host"] == "ENOENT"
    assert got["etc_shadow"] == "ENOENT"
    assert got["write_usr"] == "EROFS"
    if os.geteuid() == 0:  # the control: root on the host may open them
        assert host["proc_sys"] == "ok"
    assert got["proc_sys"] in ("EROFS", "EACCES")
    assert got["proc_sysrq"] in ("EROFS", "EACCES", "ENOENT")
    assert got["tmpdir_write"] == "ok" and (paths["tmpdir"] / "t").read_text() == "t"
    assert got["pid"] <= 3  # its own PID namespace
    assert got["ppid_visible"] == "ENOENT"
    assert got["hostname"] == "python-sb"
    assert got["env"] == ["LANG", "ONLY", "PATH"] or set(got["env"]) - {"PWD", "LC_CTYPE"} == {
        "LANG",
        "ONLY",
        "PATH",
    }
    assert got["nnp"] == "1" and got["seccomp"] == "2"
    assert got["session_inside"] is True  # --new-session
    assert got["tcp_host_port"] == "ECONNREFUSED"  # own network namespace: host port absent
    assert got["ipc_ns"] != os.readlink("/proc/self/ns/ipc")


def test_bwrap_isolation(tmp_path: Path) -> None:
    require_tool("bwrap", "bubblewrap")
    check_isolation("bwrap", tmp_path)


def test_bwrap_exit_status_and_stdio(tmp_path: Path) -> None:
    require_tool("bwrap", "bubblewrap")
    result = run_in(
        "bwrap",
        Policy(),
        "import sys; print(input()); sys.exit(7)",
        [],
        cwd=tmp_path,
        tmpdir=tmp_path,
        input="hello\n",
    )
    assert result.returncode == 7
    assert result.stdout == "hello\n"


def test_bwrap_availability_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from pysandboxes.providers import bwrap

    bwrap.bwrap_path.cache_clear()
    monkeypatch.setenv("PATH", "/nonexistent")
    try:
        state = get_provider("bwrap").availability()
        assert not state.ok
        assert "not installed" in state.reason
        assert "apt-get install bubblewrap" in state.install_hint
    finally:
        bwrap.bwrap_path.cache_clear()
