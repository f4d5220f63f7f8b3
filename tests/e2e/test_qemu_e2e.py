"""``python-sb`` with ``os-sandbox=qemu`` end to end: the real command boots a real VM.

Each run boots a guest (about 4 s under software emulation on an idle 2-core machine, far more
on a loaded one), so the checks are few and each run checks several things: stdio, exit status
and the environment; files (absent, read-only, read-write); a forwarded signal; no network
device without ``net=`` rules; no VM left behind when python-sb is killed; the boot watchdog;
and the ``--learn`` -> replay cycle with the records coming back from the guest.
The hostile corpus (``tests/redteam/hostile/``) adds the attacks, each with its control.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import PYTHON_SB, base_env, require, run_sb

pytestmark = [pytest.mark.kernel, pytest.mark.slow]
#: A VM run on a loaded machine under TCG can take tens of seconds.
TIMEOUT = 240


@pytest.fixture(autouse=True)
def qemu_available() -> None:
    from pysandboxes.providers import get_provider

    state = get_provider("qemu").availability()
    require(state.ok, f"os-sandbox=qemu: {state.reason} ({state.install_hint})")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def rules(project: Path, *lines: str) -> None:
    (project / ".py-sandboxes").write_text("os-sandbox=qemu\n" + "".join(f"{x}\n" for x in lines))


STDIO_PROGRAM = r"""
import errno, json, os, socket, sys
data = sys.stdin.read()
sys.stderr.write("to stderr\n")
try:
    socket.create_connection(("1.1.1.1", 80), timeout=5)
    net = "connected"
except OSError as exc:
    net = errno.errorcode.get(exc.errno, str(exc))
print(json.dumps({
    "stdin": data,
    "granted": os.environ.get("PYSB_GRANTED"),
    "secret": os.environ.get("PYSB_SECRET"),
    "interfaces": sorted(line.split(":")[0].strip()
                         for line in open("/proc/net/dev").read().splitlines()[2:]),
    "net": net,
    "uid": os.getuid(),
    "cwd": os.getcwd(),
}))
sys.exit(7)
"""


def test_stdio_exit_status_environment_and_no_network_device(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    rules(project, f"expose-ro={project}", "env=PYSB_GRANTED=${PYSB_GRANTED}", "py-sandbox=false")
    (project / "prog.py").write_text(STDIO_PROGRAM)
    env = base_env(home, {"PYSB_GRANTED": "yes", "PYSB_SECRET": "hidden"})
    result = run_sb(["prog.py"], cwd=project, env=env, input="line 1\nline 2\n", timeout=TIMEOUT)
    assert result.returncode == 7, result.stderr
    assert "to stderr" in result.stderr
    report = json.loads(result.stdout)
    assert report["stdin"] == "line 1\nline 2\n"
    assert report["granted"] == "yes" and report["secret"] is None
    # No net= rule: the VM has no network device at all, only its loopback.
    assert report["interfaces"] == ["lo"]
    assert report["net"] == "ENETUNREACH"
    assert report["uid"] == os.getuid() and report["cwd"] == str(project)


@pytest.mark.parametrize("network", [False, True], ids=["no-net", "net"])
def test_killed_by_sigkill_ends_with_sigkill(home: Path, tmp_path: Path, network: bool) -> None:
    """Issue 26, defect 2: the relay tried to reset SIGKILL's disposition (a traceback)."""

    project = tmp_path / "project"
    project.mkdir()
    more = ["net=ALLOW|TCP|*|9|OUT"] if network else []
    rules(project, f"expose-ro={project}", "py-sandbox=false", *more)
    (project / "prog.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    result = run_sb(["prog.py"], cwd=project, env=base_env(home), timeout=TIMEOUT)
    assert result.returncode == -signal.SIGKILL, result.stderr
    assert "Traceback" not in result.stderr, result.stderr


FILES_PROGRAM = r"""
import errno, json, sys
out = {}
def attempt(name, action):
    try:
        action()
        out[name] = "ok"
    except OSError as exc:
        out[name] = errno.errorcode.get(exc.errno, str(exc))
attempt("read_secret", lambda: open(sys.argv[1]).read())
attempt("write_ro", lambda: open(sys.argv[2], "w").write("x"))
attempt("write_rw", lambda: open(sys.argv[3], "w").write("written in the VM"))
attempt("read_ignored", lambda: open(sys.argv[4]).read())
attempt("write_host_tmp", lambda: open("/tmp/pysb-qemu-e2e-escape", "w").write("x"))
print(json.dumps(out))
"""


def test_files_absent_read_only_and_read_write(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    data = tmp_path / "data"
    out = tmp_path / "out"
    for path in (project, data, out):
        path.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (data / "ro.txt").write_text("keep")
    (data / ".env").write_text("TOKEN=1")
    rules(
        project,
        f"expose-ro={project}",
        f"expose-ro={data}",
        f"expose-rw={out}",
        "ignore=.env",
        "py-sandbox=false",
    )
    (project / "prog.py").write_text(FILES_PROGRAM)
    args = ["prog.py", str(secret), str(data / "ro.txt"), str(out / "new.txt"), str(data / ".env")]
    assert not os.path.exists("/tmp/pysb-qemu-e2e-escape")
    result = run_sb(args, cwd=project, env=base_env(home), timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["read_secret"] == "ENOENT"  # not in the VM at all
    assert report["write_ro"] == "EROFS"
    assert report["write_rw"] == "ok"
    assert report["read_ignored"] == "ENOENT"
    assert report["write_host_tmp"] == "ok"  # the VM's private /tmp...
    assert not os.path.exists("/tmp/pysb-qemu-e2e-escape")  # ...vanished with it
    assert (out / "new.txt").read_text() == "written in the VM"
    assert (data / "ro.txt").read_text() == "keep"


WAITING = r"""
import os, signal, sys, time
def on_term(signum, frame):
    os.write(1, b"caught %d\n" % signum)
    sys.exit(3)
signal.signal(signal.SIGTERM, on_term)
signal.signal(signal.SIGUSR1, lambda signum, frame: os.write(1, b"usr1 %d\n" % signum))
print("ready", flush=True)
while True:
    time.sleep(0.2)
"""


def start_waiting(
    project: Path, home: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    rules(project, f"expose-ro={project}", "py-sandbox=false", *extra)
    (project / "wait.py").write_text(WAITING)
    proc = subprocess.Popen(
        [PYTHON_SB, "wait.py"],
        cwd=project,
        env=env or base_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line == "ready\n", (line, proc.stderr.read() if proc.stderr else "")
    return proc


def test_signals_reach_the_program_in_the_vm(home: Path, tmp_path: Path) -> None:
    proc = start_waiting(tmp_path, home)
    assert proc.stdout is not None
    proc.send_signal(signal.SIGUSR1)  # python-sb would die of it, were it not passed on
    assert proc.stdout.readline() == f"usr1 {int(signal.SIGUSR1)}\n"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=TIMEOUT)
    assert out == "caught 15\n", err
    assert proc.returncode == 3


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def command_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return ""


def test_sigkill_of_python_sb_leaves_no_vm(home: Path, tmp_path: Path) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = base_env(home, {"TMPDIR": str(temporary)})
    project = tmp_path / "project"
    project.mkdir()
    proc = start_waiting(project, home, env=env)
    below = descendants(proc.pid)
    qemus = [pid for pid in below if command_of(pid).endswith("qemu-system-x86_64")]
    assert qemus, [command_of(pid) for pid in below]
    proc.kill()
    proc.wait(timeout=30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        left = [pid for pid in below if os.path.exists(f"/proc/{pid}") and command_of(pid)]
        if not left:
            break
        time.sleep(0.1)
    assert not left, [command_of(pid) for pid in left]
    # What python-sb could not remove (the VM's work directory) goes at the next run's start.
    assert list(temporary.glob(f"pysb-{proc.pid}-*-qemu-*"))
    swept = run_sb(["--os-sandbox=subprocess", "-c", "pass"], cwd=home, env=env, timeout=TIMEOUT)
    assert swept.returncode == 0, swept.stderr
    assert not list(temporary.glob(f"pysb-{proc.pid}-*"))


def test_a_guest_that_never_comes_up_is_an_error_not_a_hang(home: Path, tmp_path: Path) -> None:
    from pysandboxes.providers import _qemu_kernel

    archive = _qemu_kernel.Cpio()
    archive.directory("bin")
    busybox = _qemu_kernel.find_busybox()
    assert busybox is not None
    archive.file("bin/busybox", Path(busybox).read_bytes(), 0o755)
    archive.file("init", b"#!/bin/busybox sh\necho stuck in init\n/bin/busybox sleep 3600\n", 0o755)
    initrd = tmp_path / "stuck.cpio"
    initrd.write_bytes(archive.finish())
    project = tmp_path / "project"
    project.mkdir()
    rules(project, f"qemu.initrd={initrd}", "qemu.boot-timeout=8")
    started = time.monotonic()
    result = run_sb(["-c", "print('never')"], cwd=project, env=base_env(home), timeout=TIMEOUT)
    assert result.returncode == 125
    assert "did not come up within 8 s (boot watchdog)" in result.stderr
    assert "never" not in result.stdout
    assert time.monotonic() - started < TIMEOUT


LEARN_PROGRAM = r"""
import json, os
print(open("input.txt").read().strip(), os.environ.get("PYSB_LEARNED"))
"""


def test_learn_in_the_vm_then_replay(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    rules(project)
    (project / "input.txt").write_text("data")
    (project / "prog.py").write_text(LEARN_PROGRAM)
    env = base_env(home, {"PYSB_LEARNED": "value"})
    learned = run_sb(["--learn", "prog.py"], cwd=project, env=env, timeout=TIMEOUT)
    assert learned.returncode == 0, learned.stderr
    assert learned.stdout == "data value\n"
    # The banner says where the run happens: in the VM, not "no kernel sandbox".
    (banner,) = [line for line in learned.stderr.splitlines() if "LEARNING MODE" in line]
    assert "os-sandbox=qemu" in banner and "no kernel sandbox" not in banner
    text = (project / ".py-sandboxes").read_text()
    active = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert "os-sandbox=qemu" in active
    assert "expose-ro=." in active
    assert any(line.startswith("env=PYSB_LEARNED") for line in active), active
    denials = tmp_path / "denials.jsonl"
    replay = run_sb([f"--denials={denials}", "prog.py"], cwd=project, env=env, timeout=TIMEOUT)
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout == "data value\n"
    assert not denials.exists() or denials.read_text() == ""


def test_unusable_parameters_are_refused_before_anything_runs(home: Path, tmp_path: Path) -> None:
    from pysandboxes.providers.qemu import kvm_problem

    marker = tmp_path / "ran"
    (tmp_path / "bzImage").write_bytes(b"MZ")
    cases = [
        ("--qemu.kernel=./bzImage", "cannot tell its version"),
        ("--qemu.initrd=./missing.cpio", "missing.cpio is not readable"),
    ]
    if kvm_problem():
        cases.append(("--qemu.accel=kvm", f"qemu.accel=kvm: {kvm_problem()}"))
    for option, message in cases:
        result = run_sb(
            ["--os-sandbox=qemu", option, "-c", f"open({str(marker)!r}, 'w')"],
            cwd=tmp_path,
            env=base_env(home),
            timeout=TIMEOUT,
        )
        assert result.returncode == 2, (option, result.stderr)
        assert message in result.stderr and "nothing was run" in result.stderr
        assert not marker.exists()


DENIED_PROGRAM = r"""
try:
    open(SECRET).read()
    print("read")
except PermissionError as exc:
    print(type(exc).__name__)
"""


def test_denials_come_back_over_the_channel(home: Path, tmp_path: Path) -> None:
    """``--denials=FILE`` outside every exposure: the guard's line reaches the host's file
    (through the channel: the file itself is not in the VM), for a read of a file the rules do
    not expose (refused with its rule, as under bwrap, not passed off as missing)."""

    project = tmp_path / "project"
    project.mkdir()
    rules(project, "expose-ro=.")
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (project / "prog.py").write_text(f"SECRET = {str(secret)!r}\n" + DENIED_PROGRAM)
    denials = tmp_path / "denials.jsonl"
    result = run_sb(
        [f"--denials={denials}", "prog.py"], cwd=project, env=base_env(home), timeout=TIMEOUT
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "RulePermissionError\n"
    lines = [json.loads(line) for line in denials.read_text().splitlines()]
    assert [(d["kind"], d["target"], d["detail"]) for d in lines] == [("file", str(secret), "read")]
    # Control: the same program without the sandbox reads the file.
    control = subprocess.run(
        [sys.executable, str(project / "prog.py")], capture_output=True, text=True, check=False
    )
    assert control.stdout == "read\n"


TERMINAL_PROGRAM = r"""
import os, sys, time
size = os.get_terminal_size(1)
print("isatty", os.isatty(0), os.isatty(1), os.isatty(2), size.columns, size.lines)
line = input("type: ")
print("line=%r" % line)
try:
    time.sleep(60)
except KeyboardInterrupt:
    print("interrupted")
    sys.exit(3)
"""


def test_a_terminal_is_a_terminal_in_the_vm(home: Path, tmp_path: Path) -> None:
    """python-sb on a terminal: the program sees one (isatty, window size), the VM's line
    discipline edits the line typed (a backspace removes a character), Ctrl-C typed reaches the
    program as SIGINT, and python-sb's terminal is left as it was found."""

    import fcntl
    import struct
    import termios

    project = tmp_path / "project"
    project.mkdir()
    rules(project, "expose-ro=.", "python-import=*")
    (project / "prog.py").write_text(TERMINAL_PROGRAM)
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    before = termios.tcgetattr(slave)
    proc = subprocess.Popen(
        [PYTHON_SB, "prog.py"],
        cwd=project,
        env=base_env(home),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    seen = b""

    def read_until(marker: bytes) -> None:
        nonlocal seen
        deadline = time.monotonic() + TIMEOUT
        while marker not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if ready:
                try:
                    seen += os.read(master, 4096)
                except OSError:
                    return

    try:
        read_until(b"type: ")
        os.write(master, b"abc\x7fd\r")  # typed: abc, backspace, d, Enter
        read_until(b"line=")
        time.sleep(0.5)
        os.write(master, b"\x03")  # Ctrl-C
        read_until(b"interrupted")
        status = proc.wait(timeout=TIMEOUT)
        after = termios.tcgetattr(master)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    text = seen.decode(errors="replace")
    assert "isatty True True True 100 30" in text, text
    assert "line='abd'" in text, text
    assert "interrupted" in text and status == 3, (status, text)
    assert after == before


def test_sigkill_of_python_sb_on_a_terminal_restores_it(home: Path, tmp_path: Path) -> None:
    """python-sb made its terminal raw while the VM runs; killed with SIGKILL, it cannot put
    it back: the relay below it (its parent-death signal is SIGHUP once it runs) restores the
    terminal and ends the VM. Control: the terminal is raw while the program runs."""

    import termios

    project = tmp_path / "project"
    project.mkdir()
    rules(project, "expose-ro=.", "python-import=*")
    (project / "prog.py").write_text(TERMINAL_PROGRAM)
    master, slave = os.openpty()
    before = termios.tcgetattr(slave)
    proc = subprocess.Popen(
        [PYTHON_SB, "prog.py"],
        cwd=project,
        env=base_env(home),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    seen = b""
    try:
        deadline = time.monotonic() + TIMEOUT
        while b"type: " not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if ready:
                seen += os.read(master, 4096)
        assert b"type: " in seen, seen
        below = descendants(proc.pid)
        while_running = termios.tcgetattr(slave)
        proc.kill()
        proc.wait(timeout=30)
        deadline = time.monotonic() + 30
        after = termios.tcgetattr(slave)
        while after != before and time.monotonic() < deadline:
            time.sleep(0.1)
            after = termios.tcgetattr(slave)
        deadline = time.monotonic() + 30
        left = below
        while left and time.monotonic() < deadline:
            left = [pid for pid in below if os.path.exists(f"/proc/{pid}") and command_of(pid)]
            time.sleep(0.1)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(slave)
        os.close(master)
    assert while_running != before  # raw while the VM ran: the restore below is real
    assert after == before
    assert not left, [command_of(pid) for pid in left]
