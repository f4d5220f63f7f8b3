"""The hostile corpus: attack programs run by the real ``python-sb`` with ``--py-sandbox=false``.

With the Python layer off nothing inside the interpreter refuses anything, so every refusal seen
here comes from the kernel provider (``--os-sandbox=NAME``). Each attack program in ``attacks/``
prints one JSON verdict (``_verdict.py``); a test asserts that, in the sandbox, the objective is
not reached and the failure is the expected kernel refusal (an errno), and, as its control, that
the same program reaches the objective when run by plain python.

Every kernel provider whose module exists joins automatically (``conftest.py`` parametrizes the
``kernel_provider`` fixture over ``KERNEL_PROVIDERS``); one that cannot run here is skipped with
its reason by ``require`` (a failure in CI). An objective a provider cannot express is listed in
:data:`CANNOT_EXPRESS` with the reason: its test is then a strict xfail, so it is reported on
every run and turns into a failure the day the provider starts holding (update the table then).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import PYTHON, PYTHON_SB, base_env, run_python, run_sb

ATTACKS = Path(__file__).resolve().parent / "attacks"

#: (provider, objective) -> why that provider cannot hold it. Keep reasons precise.
_FIFO = (
    "a read-only mount refuses writes to files and directories, not to a named pipe; nothing "
    "lists the FIFOs of an exposed tree short of walking it at every start. The Python layer "
    "refuses such an open as a write; python-sb says so at start (files.special-read-only)."
)
CANNOT_EXPRESS: dict[tuple[str, str], str] = {
    ("landlock", "chmod_outside"): (
        "Landlock (ABI <= 7) does not restrict file metadata: chmod, chown, utime and extended "
        "attributes work on any path the process can name; seccomp cannot see the path. The "
        "Python layer judges it when on; python-sb says so at start when it is off."
    ),
    **{
        ("landlock", "metadata_ro_" + how): (
            "Landlock (ABI <= 7) has no metadata rights, in read-only exposures either; seccomp "
            "cannot see the path. The Python layer judges it; python-sb says so at start "
            "(files.metadata), and refuses the set-id bits (seccomp)."
        )
        for how in ("chmod", "utime", "xattr")
    },
    ("landlock", "proc_stat"): (
        "Landlock has no PID namespace: under expose-ro=/ the host's /proc lists every process "
        "of the host, and their stat files are world-readable (what bwrap's and unshare's own "
        "/proc hide); environ stays refused (test_processes.py). docs/providers, landlock."
    ),
    ("bwrap", "fifo_write"): _FIFO,
    ("unshare", "fifo_write"): _FIFO,
}

#: Name of the host environment variable that holds a secret no rule grants.
SECRET_VAR = "PYSB_HOSTILE_TOKEN"


def cannot_express(provider: str, objective: str) -> str | None:
    """Why ``provider`` cannot hold ``objective`` on this machine, or None when it can."""

    reason = CANNOT_EXPRESS.get((provider, objective))
    if reason is None and provider == "landlock" and objective == "signal_host":
        from pysandboxes.providers.landlock import landlock_abi

        if 0 < landlock_abi() < 6:
            reason = f"Landlock ABI {landlock_abi()} has no signal scope (ABI 6, Linux 6.12)"
    return reason


def expect_refusal(request: pytest.FixtureRequest, provider: str, objective: str) -> None:
    """Mark the running test as a strict xfail when ``provider`` cannot express ``objective``."""

    reason = cannot_express(provider, objective)
    if reason is not None:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"{provider}: {reason}"))


@dataclass
class Listener:
    """A loopback server run by the test (the host side): it greets every client with ``banner``."""

    family: int
    address: Any
    banner: str
    sock: socket.socket = field(init=False)
    _thread: threading.Thread = field(init=False)

    def __post_init__(self) -> None:
        self.sock = socket.socket(self.family, socket.SOCK_STREAM)
        self.sock.bind(self.address)
        self.sock.listen()
        self.sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.sendall(self.banner.encode())

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Scene:
    """One sandbox set-up: exposures, a secret outside them, and host-side targets."""

    root: Path
    home: Path
    ro: Path  # expose-ro
    work: Path  # expose-rw
    secret: Path  # outside every exposure
    secret_text: str
    host_pid: int  # a host process (outside the sandbox) holding the secret in its environment
    granted: Listener  # TCP port a rule grants (OUT)
    forbidden: Listener  # TCP port no rule grants
    abstract: Listener  # abstract Unix socket of the host
    unix_path: Listener  # Unix socket of the host, by path, outside every exposure
    bind_granted: int  # TCP port an IN rule grants
    bind_forbidden: int  # TCP port no rule grants
    udp: socket.socket  # a UDP socket of the host; no rule grants UDP
    shm: SysVSegment  # System V shared memory of the host holding the secret
    rules_file: Path = field(init=False)

    def __post_init__(self) -> None:
        self.rules_file = self.root / "hostile.py-sandboxes"
        self.rules_file.write_text(
            "\n".join(
                [
                    f"expose-ro={ATTACKS}",
                    f"expose-ro={self.ro}",
                    f"expose-rw={self.work}",
                    "expose-ro=/usr/bin",
                    "expose-ro=/bin",
                    f"net=ALLOW|TCP|*|{self.granted.port}|OUT",
                    # Loopback named explicitly: a provider with its own network namespace
                    # forwards its 127.0.0.1:PORT to the host's only for such a rule.
                    f"net=ALLOW|TCP|127.0.0.1|{self.granted.port}|OUT",
                    f"net=ALLOW|TCP|*|{self.bind_granted}|IN",
                    "env=KEEP=visible",
                    "",
                ]
            )
        )

    @property
    def udp_port(self) -> int:
        return int(self.udp.getsockname()[1])

    def udp_received(self, timeout: float = 1.0) -> bytes | None:
        """The next datagram the host's UDP socket got, or None within ``timeout``."""

        self.udp.settimeout(timeout)
        try:
            return self.udp.recv(100)
        except TimeoutError:
            return None

    def env(self) -> dict[str, str]:
        return base_env(self.home, {SECRET_VAR: self.secret_text, "KEEP": "visible"})

    def _sb_args(self, provider: str, program: str, *args: str) -> list[str]:
        return [
            f"--pysandboxes-config={self.rules_file}",
            f"--os-sandbox={provider}",
            "--py-sandbox=false",
            str(ATTACKS / program),
            *args,
        ]

    def run(self, provider: str, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        """Run ``attacks/program`` with ``python-sb`` under ``provider``, Python layer off."""

        return run_sb(
            self._sb_args(provider, program, *args), cwd=self.work, env=self.env(), timeout=120
        )

    def spawn(
        self, provider: str | None, program: str, *args: str, **popen: Any
    ) -> subprocess.Popen[str]:
        """Start an attack that talks to the host while it runs (``None``: plain python)."""

        argv = (
            [PYTHON, str(ATTACKS / program), *args]
            if provider is None
            else [PYTHON_SB, *self._sb_args(provider, program, *args)]
        )
        return subprocess.Popen(
            argv,
            cwd=self.work,
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            **popen,
        )

    def sandboxed(self, provider: str, program: str, *args: str) -> dict[str, Any]:
        """The verdict of an attack run in the sandbox."""

        proc = self.run(provider, program, *args)
        return _verdict(proc, f"python-sb --os-sandbox={provider} {program}")

    def legit(self, provider: str, program: str, *args: str) -> dict[str, str]:
        """Run a legitimate program in the sandbox: the steps that did not print ``ok``."""

        proc = self.run(provider, program, *args)
        assert proc.returncode == 0, f"{program} exit {proc.returncode}: {proc.stderr}"
        steps: dict[str, str] = json.loads(proc.stdout.splitlines()[-1])
        return {name: outcome for name, outcome in steps.items() if outcome != "ok"}

    def control(self, program: str, *args: str) -> dict[str, Any]:
        """The same program run by plain python: the objective must be reachable."""

        proc = run_python([str(ATTACKS / program), *args], cwd=self.work, env=self.env())
        return _verdict(proc, f"python {program}")


def serve_attempt(proc: subprocess.Popen[str], port: int) -> tuple[dict[str, Any], bool]:
    """Drive ``attacks/tcp_bind.py``: once it listens, connect from the host to ``port``.

    Returns its final verdict and whether the host's connection was accepted.
    """

    assert proc.stdout is not None
    first = proc.stdout.readline()
    host_connected = False
    if '"listening"' in first:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=3) as client:
                host_connected = client.recv(10) == b"served"
        except OSError:
            host_connected = False
        rest, err = proc.communicate(timeout=60)
    else:
        rest, err = proc.communicate(timeout=60)
        rest = first + rest
    done = subprocess.CompletedProcess(proc.args, proc.returncode, rest, err)
    return _verdict(done, "tcp_bind"), host_connected


def verdict_of(stdout: str, stderr: str, returncode: int, what: str) -> dict[str, Any]:
    """The verdict printed by an attack started with :meth:`Scene.spawn`."""

    return _verdict(subprocess.CompletedProcess([], returncode, stdout, stderr), what)


def _verdict(proc: subprocess.CompletedProcess[str], what: str) -> dict[str, Any]:
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, (
        f"{what}: no verdict (exit {proc.returncode})\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
    )
    data: dict[str, Any] = json.loads(lines[-1])
    data["_stderr"] = proc.stderr
    return data


class SysVSegment:
    """A System V shared memory segment of the host holding ``text`` (removed by ``close``)."""

    IPC_RMID = 0

    def __init__(self, key: int, text: str) -> None:
        import ctypes

        self._libc = ctypes.CDLL(None, use_errno=True)
        self._libc.shmat.restype = ctypes.c_void_p
        self._libc.shmdt.argtypes = [ctypes.c_void_p]
        self.key = key
        self.shmid = self._libc.shmget(key, 4096, 0o1600)  # IPC_CREAT | 0600
        if self.shmid < 0:
            raise OSError(ctypes.get_errno(), f"shmget({key:#x})")
        address = self._libc.shmat(self.shmid, None, 0)
        ctypes.memmove(address, text.encode(), len(text))
        self._libc.shmdt(ctypes.c_void_p(address))

    def close(self) -> None:
        self._libc.shmctl(self.shmid, self.IPC_RMID, None)


@dataclass
class _Processes:
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def sleeper(self, env: dict[str, str]) -> subprocess.Popen[bytes]:
        # A host process that lets any process trace it (PR_SET_PTRACER_ANY), so that the
        # ptrace control also succeeds under Yama's ptrace_scope=1 without root.
        code = (
            "import ctypes, time\n"
            "ctypes.CDLL(None).prctl(0x59616D61, ctypes.c_ulong(-1), 0, 0, 0)\n"
            "time.sleep(300)\n"
        )
        proc = subprocess.Popen([PYTHON, "-c", code], env=env)
        self.started.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.started:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)


def make_scene(tmp_path: Path) -> Iterator[Scene]:
    """Build a scene under ``tmp_path``; stops its host processes and servers afterwards."""

    root = tmp_path
    home = root / "home"
    ro = root / "exposed-ro"
    work = root / "exposed-rw"
    outside = root / "outside"
    for path in (home, ro, work, outside):
        path.mkdir()
    (ro / "public.txt").write_text("public data\n")
    secret_text = "secret-" + secrets.token_hex(8)
    secret = outside / "secret.txt"
    secret.write_text(secret_text + "\n")
    processes = _Processes()
    host = processes.sleeper({"PATH": os.environ.get("PATH", "/usr/bin"), SECRET_VAR: secret_text})
    listeners = [
        Listener(socket.AF_INET, ("127.0.0.1", 0), "granted-" + secrets.token_hex(4)),
        Listener(socket.AF_INET, ("127.0.0.1", 0), "forbidden-" + secrets.token_hex(4)),
        Listener(socket.AF_UNIX, "\0pysb-hostile-" + secrets.token_hex(6), "abstract-banner"),
        Listener(socket.AF_UNIX, str(outside / "service.sock"), "unix-path-banner"),
    ]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    shm = SysVSegment(0x50590000 | secrets.randbits(16), secret_text)
    try:
        yield Scene(
            root=root,
            home=home,
            ro=ro,
            work=work,
            secret=secret,
            secret_text=secret_text,
            host_pid=host.pid,
            granted=listeners[0],
            forbidden=listeners[1],
            abstract=listeners[2],
            unix_path=listeners[3],
            bind_granted=free_port(),
            bind_forbidden=free_port(),
            udp=udp,
            shm=shm,
        )
    finally:
        shm.close()
        udp.close()
        for listener in listeners:
            listener.close()
        processes.stop()


def assert_refused(verdict: dict[str, Any], errnos: Sequence[str | None], *, provider: str) -> None:
    """The objective was not reached, and the failure is one of the expected kernel refusals."""

    assert not verdict["reached"], f"{provider}: attack {verdict['objective']} succeeded: {verdict}"
    assert verdict["errno"] in errnos, (
        f"{provider}: {verdict['objective']} failed with {verdict['errno']}, expected one of "
        f"{list(errnos)}: {verdict['detail']}\nstderr: {verdict['_stderr']}"
    )


def assert_reached(verdict: dict[str, Any]) -> None:
    """Control: without the sandbox the attack works (else the test would prove nothing)."""

    assert verdict["reached"], f"control of {verdict['objective']} failed: {verdict}"


__all__ = [
    "ATTACKS",
    "CANNOT_EXPRESS",
    "PYTHON",
    "SECRET_VAR",
    "Scene",
    "assert_reached",
    "assert_refused",
    "cannot_express",
    "expect_refusal",
    "make_scene",
    "serve_attempt",
    "verdict_of",
]
