"""Learning what child processes do, end to end (issue 11 point 11).

A program that runs ``cat``, a shell redirection, ``ls DIR`` and another Python is learned with
the real ``python-sb --learn``; the learned file is then replayed under ``landlock``, ``bwrap``
and ``unshare``, with the Python layer on and off, and must run as it did under plain python
with nothing refused. The same program learned with the observation switched off gets a file
that says what was not learned, and whose replay under Landlock fails (the control).
"""

from __future__ import annotations

import errno
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from pysandboxes.learn import children
from tests.helpers import PYTHON_SB, base_env, require, run_python, run_sb

PROGRAM = """\
import os, subprocess, sys
subprocess.run(["cat", "data/in.txt"], check=True)
subprocess.run(["sh", "-c", "cat data/in.txt > out/copy.txt"], check=True)
subprocess.run(["ls", "listed"], check=True)
os.system("cat data/other.txt")
subprocess.run(["tools/helper", "data/in.txt"], check=True)
subprocess.run(["tools/script.sh"], check=True)
child = "print(open('data/in.txt').read().strip(), 'from a Python child')"
subprocess.run([sys.executable, "-c", child], check=True)
"""


def provider_ok(name: str) -> None:
    from pysandboxes.providers import get_provider

    state = get_provider(name).availability()
    require(state.ok, f"os-sandbox={name}: {state.reason} ({state.install_hint})")


def observation_ok() -> None:
    reason = children.unavailable_reason()
    require(reason is None, f"seccomp user notification unavailable: {reason}")


def setup(project: Path) -> Path:
    (project / "data").mkdir()
    (project / "data" / "in.txt").write_text("hello\n")
    (project / "data" / "other.txt").write_text("other\n")
    (project / "out").mkdir()
    (project / "listed").mkdir()
    (project / "listed" / "entry").write_text("")
    (project / "tools").mkdir()  # a compiled helper of the project (a copy of cat)
    cat = shutil.which("cat", path=base_env(project)["PATH"])
    assert cat is not None
    shutil.copy(cat, project / "tools" / "helper")
    # a script whose interpreter the kernel opens itself (no call shows it: read from the #!)
    env = shutil.which("env", path=base_env(project)["PATH"])
    script = project / "tools" / "script.sh"
    script.write_text(f"#!{env} sh\necho from a script\n")
    script.chmod(0o755)
    (project / "app").mkdir()
    script = project / "app" / "prog.py"  # its own directory is granted: not the project's
    script.write_text(PROGRAM)
    return script


def rule_lines(path: Path) -> list[str]:
    out = []
    for raw in path.read_text().splitlines():
        line = raw.split("  #", 1)[0].strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


@pytest.fixture
def learned(project: Path, home: Path) -> tuple[Path, Path, dict[str, str], str]:
    """The program learned once: (script, rule file, env, the control's stdout)."""

    observation_ok()
    script = setup(project)
    env = base_env(home)
    control = run_python([str(script)], cwd=project, env=env)
    assert control.returncode == 0, control.stderr
    (project / "out" / "copy.txt").unlink()
    rules = project / "learned.py-sandboxes"
    learn = run_sb([f"--learn={rules}", str(script)], cwd=project, env=env)
    assert learn.returncode == 0, learn.stderr
    assert learn.stdout == control.stdout
    assert "NOT observed" not in learn.stderr
    assert "observed child processes (seccomp user notification): they ran " in learn.stderr
    assert "helper" in learn.stderr and "cat" in learn.stderr
    (project / "out" / "copy.txt").unlink()
    return script, rules, env, control.stdout


def test_learned_file_names_the_programs_and_the_childrens_files(
    learned: tuple[Path, Path, dict[str, str], str],
) -> None:
    _, rules, _, _ = learned
    lines = rule_lines(rules)
    for program in ("cat", "sh", "ls", "env"):
        found = shutil.which(program, path=base_env(Path("/"))["PATH"])
        assert found is not None
        assert f"expose-ro={found}" in lines, (program, lines)
    assert "expose-rw=./out" in lines  # written by the shell's redirection only
    assert "expose-ro=./listed" in lines  # listed by ls only
    assert "expose-ro=./data" in lines
    assert "expose-ro=./tools" in lines  # the helper's directory: Landlock needs it to execute
    assert "python-api=ALLOW:subprocess.run" in lines  # the Python layer's grant, as before
    assert "python-api=ALLOW:os.system" in lines
    # nothing the providers grant by default: loader, libraries, /proc
    assert not any(line.startswith(("expose-ro=/lib", "expose-ro=/usr/lib")) for line in lines)
    assert not any("/proc" in line for line in lines)


@pytest.mark.parametrize("provider", ["landlock", "bwrap", "unshare"])
@pytest.mark.parametrize("python_layer", ["true", "false"])
def test_learned_file_replays_under_every_provider(
    learned: tuple[Path, Path, dict[str, str], str],
    project: Path,
    tmp_path: Path,
    provider: str,
    python_layer: str,
) -> None:
    provider_ok(provider)
    script, rules, env, expected = learned
    denials = tmp_path / f"denials-{provider}-{python_layer}.jsonl"
    result = run_sb(
        [
            f"--pysandboxes-config={rules}",
            f"--os-sandbox={provider}",
            f"--py-sandbox={python_layer}",
            f"--denials={denials}",
            str(script),
        ],
        cwd=project,
        env=env,
    )
    refused = denials.read_text() if denials.exists() else ""
    assert result.returncode == 0, f"{result.stderr}\n{refused}"
    assert refused == ""
    assert result.stdout == expected
    assert (project / "out" / "copy.txt").read_text() == "hello\n"


def test_switched_off_says_what_was_not_learned_and_the_replay_fails(
    project: Path, home: Path
) -> None:
    provider_ok("landlock")
    script = setup(project)
    env = base_env(home, {children.SWITCH: "off"})
    rules = project / "learned.py-sandboxes"
    learn = run_sb([f"--learn={rules}", str(script)], cwd=project, env=env)
    assert learn.returncode == 0, learn.stderr
    assert "NOT observed" in learn.stderr
    assert f"{children.SWITCH}=off" in learn.stderr
    text = rules.read_text()
    assert "# child processes were started (os.system, subprocess.run) but NOT observed" in text
    lines = rule_lines(rules)
    assert not any(line.startswith(("expose-ro=/usr/bin", "expose-ro=/bin")) for line in lines)
    assert "expose-ro=./listed" not in lines
    # The control: without the children's rules, Landlock refuses to run cat.
    replay = run_sb(
        [f"--pysandboxes-config={rules}", "--os-sandbox=landlock", str(script)],
        cwd=project,
        env=base_env(home),
    )
    assert replay.returncode != 0
    assert "Permission denied" in replay.stderr


def test_a_program_without_children_gets_no_note(project: Path, home: Path) -> None:
    script = project / "plain.py"
    script.write_text("print(open(__file__).read().count('print'))\n")
    env = base_env(home, {children.SWITCH: "off"})
    rules = project / "learned.py-sandboxes"
    learn = run_sb([f"--learn={rules}", str(script)], cwd=project, env=env)
    assert learn.returncode == 0, learn.stderr
    assert "NOT observed" not in learn.stderr
    assert "NOT observed" not in rules.read_text()


def test_processes_left_running_do_not_hold_python_sb(project: Path, home: Path) -> None:
    observation_ok()
    script = project / "daemon.py"
    script.write_text(
        "import subprocess\n"
        "subprocess.Popen(['sleep', '30'], stdout=subprocess.DEVNULL,\n"
        "                 stderr=subprocess.DEVNULL, start_new_session=True)\n"
        "print('started')\n"
    )
    rules = project / "learned.py-sandboxes"
    # run_sb's timeout (20 s) fails the test if python-sb waited for the sleep to end
    learn = run_sb([f"--learn={rules}", str(script)], cwd=project, env=base_env(home), timeout=20)
    assert learn.returncode == 0, learn.stderr
    assert learn.stdout == "started\n"
    assert "no longer observed" in learn.stderr
    sleep = shutil.which("sleep", path=base_env(home)["PATH"])
    assert f"expose-ro={sleep}" in rule_lines(rules)


def test_children_never_hang_when_python_sb_is_killed(project: Path, home: Path) -> None:
    """SIGKILL to python-sb closes the listener: the program's filtered calls then fail with
    ENOSYS (what the kernel does), they never wait forever."""

    observation_ok()
    flag = project / "go"
    script = project / "orphan.py"
    script.write_text(
        "import os, time\n"
        "print('ready', flush=True)\n"
        f"while not os.path.exists({str(flag)!r}):\n"
        "    time.sleep(0.05)\n"
        "try:\n"
        "    open(__file__).close()\n"
        "    print('opened', flush=True)\n"
        "except OSError as exc:\n"
        "    print('errno', exc.errno, flush=True)\n"
    )
    rules = project / "learned.py-sandboxes"
    proc = subprocess.Popen(
        [PYTHON_SB, f"--learn={rules}", str(script)],
        cwd=project,
        env=base_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        flag.write_text("")  # the program (now an orphan) goes on
        deadline = time.monotonic() + 20
        rest = ""
        while time.monotonic() < deadline and not rest:
            rest = proc.stdout.readline()
        assert rest == f"errno {errno.ENOSYS}\n"
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not rules.exists()  # nothing could be written: python-sb was killed


def test_enforcing_runs_never_set_it_up(project: Path, home: Path) -> None:
    script = project / "status.py"
    script.write_text(
        "import subprocess\n"
        "out = subprocess.run(['cat', '/proc/self/status'], capture_output=True, text=True)\n"
        "print([l for l in out.stdout.splitlines() if l.startswith('Seccomp_filters')])\n"
    )
    rules = project / ".py-sandboxes"
    rules.write_text(
        "py-sandbox=true\nos-sandbox=subprocess\nexpose-ro=.\npython-import=subprocess\n"
        "python-api=ALLOW:subprocess.run\n"
    )
    result = run_sb([str(script)], cwd=project, env=base_env(home))
    assert result.returncode == 0, result.stderr
    assert "Seccomp_filters:\\t0" in result.stdout
    # the same program learned: its child runs under the learning filter
    learn = run_sb(["--learn=learned.py-sandboxes", str(script)], cwd=project, env=base_env(home))
    assert learn.returncode == 0, learn.stderr
    if children.unavailable_reason() is None:
        assert "Seccomp_filters:\\t1" in learn.stdout


def test_the_interpreters_own_accesses_are_learned_once_by_the_python_layer(
    project: Path, home: Path
) -> None:
    """A program without children learns the same file with the observation on and off: the
    interpreter's own calls pass through the listener but are left to the Python layer."""

    observation_ok()
    (project / "app").mkdir()
    (project / "data").mkdir()
    (project / "data" / "in.txt").write_text("x\n")
    script = project / "app" / "own.py"
    script.write_text(
        "import os\n"
        "print(open('data/in.txt').read().strip(), sorted(os.listdir('data')))\n"
        "os.makedirs('made', exist_ok=True)\n"
        "open('made/out.txt', 'w').write('y')\n"
    )
    texts = []
    for switch in ("on", "off"):
        rules = project / f"learned-{switch}.py-sandboxes"
        env = base_env(home, {children.SWITCH: switch})
        learn = run_sb([f"--learn={rules}", str(script)], cwd=project, env=env)
        assert learn.returncode == 0, learn.stderr
        texts.append(rule_lines(rules))
    assert texts[0] == texts[1]
    # os.makedirs('made') grants the folder that holds it (a fresh run creates it again:
    # issue 26 defect 5), which covers ./data too.
    assert "expose-rw=." in texts[0]
