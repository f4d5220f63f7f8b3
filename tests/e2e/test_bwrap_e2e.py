"""``python-sb --os-sandbox=bwrap`` end to end: statuses and signals.

bubblewrap forwards no signal, so python-sb stays as its parent and delivers them to the program
(``providers/bwrap_signals.py``): a ``kill`` of python-sb reaches the program, Ctrl-C on the
terminal reaches the program's process group, each compared with plain python3. bubblewrap
reports a program killed by signal N as exit status 128+N (SPEC §1 accepts it).
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

import pytest

from tests.e2e.test_unshare_e2e import (
    NET_RULE,
    processes_with,
    provider_ok,
    start,
    wait_gone,
    write_program,
)
from tests.helpers import PYTHON, PYTHON_SB, base_env, pty_session, run_sb, signalled


@pytest.mark.parametrize("code", [0, 5])
def test_exit_status_passes_through(project: Path, home: Path, code: int) -> None:
    provider_ok("bwrap")
    write_program(project)
    result = run_sb(
        ["--os-sandbox=bwrap", "--py-sandbox=false", "prog.py", "status", str(code)],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == code, result.stderr
    assert result.stdout.startswith("ready 2")


def test_signal_death_is_128_plus_n(project: Path, home: Path) -> None:
    provider_ok("bwrap")
    write_program(project)
    result = run_sb(
        ["--os-sandbox=bwrap", "--py-sandbox=false", "prog.py", "segv"],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == 128 + signal.SIGSEGV


@pytest.mark.parametrize("network", [False, True], ids=["no-net", "net"])
def test_killed_by_sigkill_is_137(project: Path, home: Path, network: bool) -> None:
    """Issue 26, defect 2: every provider ends like the program did (bubblewrap: 128+N)."""

    provider_ok("bwrap")
    write_program(project)
    more = [NET_RULE] if network else []
    result = run_sb(
        ["--os-sandbox=bwrap", "--py-sandbox=false", *more, "prog.py", "kill"],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == 128 + signal.SIGKILL, result.stderr


def test_sigterm_reaches_the_program(project: Path, home: Path) -> None:
    provider_ok("bwrap")
    write_program(project)
    marker = f"marker-{uuid.uuid4().hex}"
    proc = start("bwrap", project, home, "wait", marker=marker)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("ready 2")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert "caught 15" in out, err  # the program's own handler ran
    assert proc.returncode == 3
    assert wait_gone(marker) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1])
def test_signal_without_a_handler_ends_the_program_like_python(
    project: Path, home: Path, signum: int
) -> None:
    """The same ``kill`` to python3 and to python-sb: python3 dies by the signal, the program in
    the sandbox too (reported as 128+N by bubblewrap); SIGINT is a KeyboardInterrupt in both."""

    provider_ok("bwrap")
    (project / ".py-sandboxes").write_text(f"expose-ro={project}\n")
    results = []
    for argv in ([PYTHON], [PYTHON_SB, "--os-sandbox=bwrap", "--py-sandbox=false"]):
        code, err = signalled(argv, signum, project, base_env(home))
        results.append((code, "KeyboardInterrupt" in err))
    assert results[0] == (-signum, signum == signal.SIGINT)
    assert results[1] == (128 + signum, signum == signal.SIGINT)


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_sigkill_of_python_sb_leaves_no_process(project: Path, home: Path, provider: str) -> None:
    provider_ok(provider)
    write_program(project)
    marker = f"marker-{uuid.uuid4().hex}"
    proc = start(provider, project, home, "wait", marker=marker)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("ready")
    assert processes_with(marker)  # control: the program runs and is visible from the host
    proc.kill()  # python-sb runs no code of its own: the sandbox dies with it
    proc.wait(timeout=30)
    assert wait_gone(marker) == []


COUNT_SIGINT = """
import os, signal, subprocess, sys, time
signal.signal(signal.SIGINT, lambda *a: os.write(1, b"parent got SIGINT\\n"))
child = subprocess.Popen([sys.executable, "child.py"])
time.sleep(0.5)
print("ready", flush=True)
child.wait(timeout=30)
print("done", flush=True)
"""
CHILD = """
import os, signal, time
signal.signal(signal.SIGINT, lambda *a: (os.write(1, b"child got SIGINT\\n"), os._exit(0)))
time.sleep(30)
"""


def test_terminal_ctrl_c_reaches_the_program_and_its_children(project: Path, home: Path) -> None:
    """Ctrl-C typed on the terminal reaches the program and its children, as the terminal's
    foreground job under python3, although ``--new-session`` took the program off the
    terminal: python-sb, still in the foreground, sends it to the program's process group."""

    provider_ok("bwrap")
    (project / ".py-sandboxes").write_text(f"expose-ro={project}\n")
    (project / "count.py").write_text(COUNT_SIGINT)
    (project / "child.py").write_text(CHILD)
    outputs = []
    for argv in ([PYTHON], [PYTHON_SB, "--os-sandbox=bwrap", "--py-sandbox=false"]):
        sent: list[bool] = []

        def interrupt(output: bytes, sent: list[bool] = sent) -> bytes | None:
            if not sent and b"ready" in output:
                sent.append(True)
                return b"\x03"  # Ctrl-C, as typed
            return None

        output, status = pty_session([*argv, "count.py"], project, base_env(home), interrupt, 60)
        text = output.decode(errors="replace")
        assert sent, text
        assert os.waitstatus_to_exitcode(status) == 0, text
        lines = text.replace("^C", "").splitlines()  # the terminal echoes Ctrl-C as ^C
        outputs.append(sorted(line for line in lines if "got" in line or line == "done"))
    assert outputs[0] == outputs[1] == ["child got SIGINT", "done", "parent got SIGINT"]


def test_ctrl_c_in_the_repl_interrupts_and_the_session_goes_on(project: Path, home: Path) -> None:
    provider_ok("bwrap")
    (project / ".py-sandboxes").write_text(
        f"expose-ro={project}\npython-import=time\nenv=LANG=${{LANG}}\n"
    )
    # (what must have appeared, what to type then): the prompt, the sleep running, the
    # interruption reported with a new prompt, the next result.
    steps = [
        (b">>> ", b"import time; print('sleeping', flush=True); time.sleep(30)\n"),
        (b"sleeping\r\n", b"\x03"),
        (b"KeyboardInterrupt", b"print(6 * 7)\n"),
        (b"42\r\n", b"raise SystemExit(7)\n"),
    ]

    def respond(output: bytes) -> bytes | None:
        if steps and steps[0][0] in output:
            _, keys = steps.pop(0)
            if keys == b"\x03":
                time.sleep(0.3)  # into the sleep
            return keys
        return None

    # The Python layer on: the native REPL (IPython, installed here, is not allowed by a rule).
    output, status = pty_session(
        [PYTHON_SB, "--os-sandbox=bwrap"],
        project,
        base_env(home),
        respond,
        60,
    )
    text = output.decode(errors="replace")
    assert "KeyboardInterrupt" in text, text
    assert "42" in text, text
    assert os.waitstatus_to_exitcode(status) == 7, text


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_python_layer_and_kernel_layer_together(project: Path, home: Path, provider: str) -> None:
    """With the Python layer on (the default), the guarded child starts inside the namespace
    sandbox: it refuses by rule, and the kernel layer holds what the guard would not see."""

    provider_ok(provider)
    (project / ".py-sandboxes").write_text(f"expose-ro={project}\npython-import=*\n")
    (project / "prog.py").write_text(
        "import os, socket, sys\n"
        "from pysandboxes import sandbox_denials\n"
        "try:\n"
        "    socket.create_connection(('127.0.0.1', 9))\n"
        "except OSError as exc:\n"
        "    print('refused', [d.kind for d in sandbox_denials(exc)])\n"
        "print('pid', os.getpid(), 'hidden', os.path.exists(sys.argv[1]))\n"
        "sys.exit(6)\n"
    )
    result = run_sb(
        [f"--os-sandbox={provider}", "prog.py", str(home)],
        cwd=project,
        env=base_env(home),
        timeout=60,
    )
    assert result.returncode == 6, result.stderr
    assert "refused ['net']" in result.stdout
    assert "pid 2 hidden False" in result.stdout  # own PID namespace; HOME is not in the tree
