"""The portable paths of issue 19, forced on Linux with ``PYSANDBOXES_PORTABLE`` (a switch for
tests only; src/pysandboxes/platform_caps.py): the hand-over through a pipe where memfd is
missing, python-sb as the program's parent where ``exec`` does not replace the process, kernel
providers that say they are not available, and ``--explain`` saying so.

Each test sets the profile it is about, so these run the same in the normal and the portable
CI invocations."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from tests.helpers import (
    PYTHON_SB,
    WAITING_PROGRAM,
    base_env,
    run_sb,
    signalled,
)

RULES = "os-sandbox=subprocess\nexpose-ro=.\npython-import=os\npython-import=signal\n"


def env_for(home: Path, profile: str) -> dict[str, str]:
    return base_env(home, {"PYSANDBOXES_PORTABLE": profile})


#: Prints its arguments' count and size, then shows that python-sb left it no child of its own
#: (the pipe's writer process is nobody's child: a program's os.wait() never meets it).
COUNT = """
import os, sys
print(len(sys.argv) - 1, sum(map(len, sys.argv[1:])))
try:
    os.wait()
except ChildProcessError:
    print("no child")
"""


@pytest.mark.parametrize("profile", ["posix", "spawn"])
@pytest.mark.parametrize("py_sandbox", ["true", "false"])
def test_large_hand_over_through_a_pipe(
    project: Path, home: Path, profile: str, py_sandbox: str
) -> None:
    """A run description larger than a pipe holds (300 kB of program arguments, which cross
    in it) arrives whole, with and without the Python layer."""

    (project / ".py-sandboxes").write_text(RULES + "python-api=ALLOW:os.wait\n")
    args = [f"{i:07d}" + "x" * 993 for i in range(300)]
    result = run_sb(
        [f"--py-sandbox={py_sandbox}", "-c", COUNT, *args],
        cwd=project,
        env=env_for(home, profile),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["300 300000", "no child"]


@pytest.mark.parametrize("profile", ["posix", "spawn"])
def test_exit_status_and_script(project: Path, home: Path, profile: str) -> None:
    (project / ".py-sandboxes").write_text(RULES)
    (project / "s.py").write_text("import sys\nprint(sys.argv)\nsys.exit(7)\n")
    result = run_sb(["s.py", "a", "--b"], cwd=project, env=env_for(home, profile))
    assert result.returncode == 7, result.stderr
    assert result.stdout == "['s.py', 'a', '--b']\n"


@pytest.mark.parametrize("profile", ["posix", "spawn"])
def test_death_by_a_signal_is_passed_on(project: Path, home: Path, profile: str) -> None:
    (project / ".py-sandboxes").write_text(RULES + "python-api=ALLOW:os.kill\n")
    code = "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n"
    result = run_sb(["-c", code], cwd=project, env=env_for(home, profile))
    assert result.returncode == -signal.SIGTERM, result.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_spawned_program_gets_the_signals_sent_to_python_sb(
    project: Path, home: Path, signum: int
) -> None:
    """Under ``spawn`` python-sb stays as the parent: a signal sent to it reaches the program,
    which dies by it (and so does python-sb). Control: the same program under plain python."""

    (project / ".py-sandboxes").write_text(RULES + "python-import=time\n")
    status, err = signalled([PYTHON_SB], signum, project, env_for(home, "spawn"))
    assert status == -signum, err


def test_spawned_program_is_a_child_of_python_sb(project: Path, home: Path) -> None:
    """``spawn``: python-sb does not become the program (as on Windows); ``posix``: it does."""

    (project / ".py-sandboxes").write_text(RULES + "python-import=time\n")
    for profile, stays in (("spawn", True), ("posix", False)):
        proc = subprocess.Popen(
            [
                PYTHON_SB,
                "--py-sandbox=false",
                "-c",
                "import os\nprint(os.getppid(), flush=True)\n" + WAITING_PROGRAM,
            ],
            cwd=project,
            env=env_for(home, profile),
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        parent = int(proc.stdout.readline())
        assert (parent == proc.pid) is stays
        proc.terminate()
        proc.wait(30)


@pytest.mark.parametrize("provider", ["landlock", "bwrap", "unshare", "qemu"])
def test_kernel_providers_are_not_available(project: Path, home: Path, provider: str) -> None:
    (project / ".py-sandboxes").write_text(RULES)
    (project / "s.py").write_text("print('ran')\n")
    result = run_sb([f"--os-sandbox={provider}", "s.py"], cwd=project, env=env_for(home, "1"))
    assert result.returncode == 2
    assert result.stdout == ""
    assert "is not available on this platform" in result.stderr
    assert result.stderr.endswith("python-sb: nothing was run\n")


def test_explain_says_the_python_layer_is_the_only_enforcement(project: Path, home: Path) -> None:
    (project / ".py-sandboxes").write_text(RULES)
    result = run_sb(
        ["--explain", "--json", "--os-sandbox=landlock", "-c", "pass"],
        cwd=project,
        env=env_for(home, "1"),
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["provider"]["available"] is False
    assert "not available on this platform" in data["provider"]["reason"]
    assert any("Python layer is the only enforcement" in w for w in data["warnings"])
    normal = run_sb(["--explain", "--json", "-c", "pass"], cwd=project, env=env_for(home, ""))
    # The control: on Linux itself the warning is absent.
    assert not any("only enforcement possible" in w for w in json.loads(normal.stdout)["warnings"])


def test_unknown_switch_value_is_refused(project: Path, home: Path) -> None:
    (project / ".py-sandboxes").write_text(RULES)
    result = run_sb(["-c", "print('ran')"], cwd=project, env=env_for(home, "win32"))
    assert result.returncode == 2
    assert result.stdout == ""
    assert "PYSANDBOXES_PORTABLE='win32': expected 1, posix or spawn" in result.stderr


@pytest.mark.parametrize("profile", ["posix", "spawn"])
def test_learning_reports_children_not_observed(project: Path, home: Path, profile: str) -> None:
    """Learning runs; seccomp user notification (Linux's) is reported as not available, and the
    child process it could not observe is said to be missing from the rules."""

    code = "import subprocess\nsubprocess.run(['true'])\nprint('done')\n"
    result = run_sb(["--learn=learned.rules", "-c", code], cwd=project, env=env_for(home, profile))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n"
    assert "NOT observed" in result.stderr
    assert "seccomp user notification is not available on this platform" in result.stderr
    assert (project / "learned.rules").exists()


@pytest.mark.parametrize("profile", ["posix", "spawn"])
def test_none_provider_runs_without_proc(project: Path, home: Path, profile: str) -> None:
    """``os-sandbox=none`` under the portable paths: the environment is filtered in-process,
    and no /proc clean-up is attempted (there is none to report)."""

    (project / ".py-sandboxes").write_text(RULES.replace("subprocess", "none"))
    env = env_for(home, profile)
    env["SECRET_TOKEN"] = "s3cr3t"
    code = "import os\nprint(os.environ.get('SECRET_TOKEN'))\n"
    result = run_sb(["-c", code], cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "None\n"
    assert result.stderr == ""


@pytest.mark.parametrize("profile", ["posix", "spawn"])
def test_terminal_ctrl_c_reaches_the_program_once(project: Path, home: Path, profile: str) -> None:
    """Without ``sigwaitinfo`` python-sb cannot see who sent a signal: a Ctrl-C typed while it is
    in the terminal's foreground group is not sent a second time (the terminal sent it to the
    program too). The program counts its SIGINTs; python-sb stays as the parent (audit)."""

    from tests.helpers import pty_session

    program = project / "count_sigint.py"
    program.write_text(
        "import signal, time\n"
        "count = 0\n"
        "def handler(*args):\n"
        "    global count\n"
        "    count += 1\n"
        "signal.signal(signal.SIGINT, handler)\n"
        "print('ready', flush=True)\n"
        "deadline = time.time() + 20\n"
        "while time.time() < deadline and count == 0:\n"
        "    time.sleep(0.05)\n"
        "time.sleep(1.0)  # a forwarded duplicate would arrive now\n"
        "print('count', count, flush=True)\n"
    )
    sent: list[bool] = []

    def interrupt(output: bytes) -> bytes | None:
        if not sent and b"ready" in output:
            sent.append(True)
            return b"\x03"
        return None

    output, status = pty_session(
        [PYTHON_SB, "--audit", str(program)], project, env_for(home, profile), interrupt, 60
    )
    text = output.decode(errors="replace")
    assert sent, text
    assert "count 1" in text, text
    assert status == 0, text


@pytest.mark.parametrize(("profile", "hidden"), [("", False), ("posix", True), ("spawn", True)])
def test_ignore_globs_ignore_case_where_the_file_system_does(
    project: Path, home: Path, profile: str, hidden: bool
) -> None:
    """``ignore=.env`` must hide ``.ENV`` where that is the same file (macOS, Windows; forced
    here by the profile): in the sandboxed interpreter's guard and in python-sb's own
    decisions. On Linux itself ``.ENV`` is another file, readable (the control)."""

    (project / ".py-sandboxes").write_text(RULES + "ignore=.env\n")
    (project / ".ENV").write_text("TOKEN=1\n")
    code = (
        "try:\n"
        "    print(open('.ENV').read().strip())\n"
        "except OSError as exc:\n"
        "    print('refused', type(exc).__name__)\n"
    )
    result = run_sb(["-c", code], cwd=project, env=env_for(home, profile))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ("refused RuleFileNotFoundError" if hidden else "TOKEN=1")
