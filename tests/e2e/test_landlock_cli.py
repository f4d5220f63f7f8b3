"""``--os-sandbox=landlock`` through the real ``python-sb`` command.

The attacks live in ``tests/redteam/hostile``; here: the launch itself (no extra process, native
exit status and signals), what is said at start and by ``--explain``, policies the provider must
refuse, and the error when Landlock cannot run (simulated with a seccomp filter that makes the
Landlock system calls fail the way an old kernel, a kernel booted without it, or a container
profile would).
"""

from __future__ import annotations

import errno
import signal
import subprocess
import textwrap
from pathlib import Path

import pytest

from pysandboxes.providers import landlock
from tests.helpers import PYTHON, PYTHON_SB, base_env, require, run_sb

pytestmark = pytest.mark.kernel


@pytest.fixture(autouse=True)
def _landlock_here() -> None:
    available = landlock.PROVIDER.availability()
    require(available.ok, f"Landlock unavailable: {available.reason}")
    # Below ABI 4 TCP cannot be restricted: python-sb refuses py-sandbox=false runs whose rules
    # restrict TCP (tested in tests/unit/providers/test_landlock_plan.py).
    require(landlock.landlock_abi() >= 4, "Landlock ABI 4 (Linux 6.7) needed for these runs")


def write(project: Path, rules: str, program: str) -> Path:
    (project / "rules.py-sandboxes").write_text(textwrap.dedent(rules))
    script = project / "prog.py"
    script.write_text(textwrap.dedent(program))
    return script


def sb_args(project: Path, script: Path, *extra: str) -> list[str]:
    return [
        f"--pysandboxes-config={project / 'rules.py-sandboxes'}",
        "--os-sandbox=landlock",
        "--py-sandbox=false",
        *extra,
        str(script),
    ]


def test_program_replaces_python_sb_and_keeps_its_exit_status(project: Path, home: Path) -> None:
    script = write(
        project,
        f"expose-ro={project}\n",
        "import os, sys\nprint(os.getpid(), flush=True)\nsys.exit(7)\n",
    )
    proc = subprocess.Popen(
        [PYTHON_SB, *sb_args(project, script)],
        cwd=project,
        env=base_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 7, err
    assert int(out.split()[0]) == proc.pid  # exec'd: no extra process between us and it


def test_death_by_signal_is_native(project: Path, home: Path) -> None:
    script = write(project, f"expose-ro={project}\n", "import os\nos.kill(os.getpid(), 15)\n")
    proc = run_sb(sb_args(project, script), cwd=project, env=base_env(home))
    assert proc.returncode == -signal.SIGTERM, proc.stderr


def test_death_by_sigkill_is_native(project: Path, home: Path) -> None:
    """Issue 26, defect 2, under landlock: python-sb becomes the program, its death is native."""

    script = write(project, f"expose-ro={project}\n", "import os\nos.kill(os.getpid(), 9)\n")
    proc = run_sb(sb_args(project, script), cwd=project, env=base_env(home))
    assert proc.returncode == -signal.SIGKILL, proc.stderr


def test_unenforceable_network_rule_refuses_to_start(project: Path, home: Path) -> None:
    marker = project / "ran"
    script = write(
        project,
        f"""\
        expose-rw={project}
        net=ALLOW|TCP|192.0.2.10|443|OUT
        """,
        f"open({str(marker)!r}, 'w').close()\n",
    )
    proc = run_sb(sb_args(project, script), cwd=project, env=base_env(home))
    assert proc.returncode == 2, proc.stderr
    assert "net=ALLOW|TCP|192.0.2.10|443|OUT" in proc.stderr
    assert "rules.py-sandboxes(2)" in proc.stderr
    assert not marker.exists()
    # Once the port is open to every host by another rule, nothing is over-granted: it runs.
    lines = (project / "rules.py-sandboxes").read_text()
    (project / "rules.py-sandboxes").write_text(lines + "net=ALLOW|TCP|*|443|OUT\n")
    proc = run_sb(sb_args(project, script), cwd=project, env=base_env(home))
    assert proc.returncode == 0, proc.stderr
    assert marker.exists()


def test_udp_partial_rule_refused_without_python_layer(project: Path, home: Path) -> None:
    script = write(project, f"expose-ro={project}\nnet=ALLOW|UDP|*|53|OUT\n", "pass\n")
    proc = run_sb(sb_args(project, script), cwd=project, env=base_env(home))
    assert proc.returncode == 2
    assert "UDP" in proc.stderr and "net=ALLOW|UDP|*|53|OUT" in proc.stderr


def test_start_warning_says_what_is_not_enforced(project: Path, home: Path) -> None:
    (project / "hidden.txt").write_text("hidden")
    script = write(
        project,
        f"""\
        expose-rw={project}
        ignore={project}/hidden.txt
        """,
        f"print(open({str(project / 'hidden.txt')!r}).read())\n",
    )
    proc = run_sb(sb_args(project, script), cwd=project, env=base_env(home))
    assert proc.returncode == 0, proc.stderr
    assert "ignore=" in proc.stderr and "NOT enforced" in proc.stderr
    assert "rules.py-sandboxes" in proc.stderr and "NOT protected" in proc.stderr
    assert proc.stdout.strip() == "hidden"  # what the warning said: Landlock cannot hide it


def test_explain_says_what_landlock_enforces(project: Path, home: Path) -> None:
    script = write(
        project,
        f"""\
        expose-ro={project}
        net=ALLOW|TCP|*|443|OUT
        net=ALLOW|TCP|*|8080|IN
        """,
        "pass\n",
    )
    proc = run_sb(["--explain", *sb_args(project, script)], cwd=project, env=base_env(home))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f"ABI {landlock.landlock_abi()}" in out
    assert "TCP connect: port(s) 443" in out and "TCP bind: port(s) 8080" in out
    assert "UDP sockets: refused" in out


# -- Landlock unavailable ----------------------------------------------------------------------

#: Runs python-sb under a seccomp filter that makes landlock_create_ruleset fail with argv[1].
WRAPPER = textwrap.dedent(
    """
    import os, sys
    from pysandboxes.providers import _linux, seccomp
    nr = _linux.nr("landlock_create_ruleset")
    seccomp.install(seccomp._assemble([
        ("stmt", 0x20, 0),
        ("jump", 0x15, nr, None, "allow"),
        ("stmt", 0x06, 0x00050000 | int(sys.argv[1])),
        ("label", "allow"),
        ("stmt", 0x06, 0x7FFF0000),
    ]))
    os.execv(sys.argv[2], sys.argv[2:])
    """
)


@pytest.mark.parametrize(
    ("err", "reason", "hint"),
    [
        (errno.ENOSYS, "no Landlock", "upgrade the kernel"),
        (errno.EOPNOTSUPP, "not enabled at boot", "lsm="),
        (errno.EPERM, "blocked by a seccomp filter", "seccomp profile"),
    ],
)
def test_unavailable_landlock_stops_with_reason_and_hint(
    project: Path, home: Path, err: int, reason: str, hint: str
) -> None:
    marker = project / "ran"
    script = write(project, f"expose-rw={project}\n", f"open({str(marker)!r}, 'w').close()\n")
    proc = subprocess.run(
        [PYTHON, "-c", WRAPPER, str(err), PYTHON_SB, *sb_args(project, script)],
        cwd=project,
        env=base_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "os-sandbox=landlock" in proc.stderr
    assert reason in proc.stderr and hint in proc.stderr
    assert not marker.exists()  # never a silent fallback


def test_denials_file_is_written_from_inside_the_sandbox(project: Path, home: Path) -> None:
    # The Python layer appends each refusal to --denials=FILE from inside the sandbox: Landlock
    # must let it write that one file (created by python-sb), and nothing else beside it.
    logs = project.parent / "logs"
    logs.mkdir()
    denials = logs / "denials.jsonl"
    script = write(
        project,
        f"expose-ro={project}\n",
        f"""\
        try:
            import json
        except ImportError:
            pass
        try:
            open({str(logs / "other.txt")!r}, "w")
        except PermissionError:
            print("other refused")
        """,
    )
    args = [
        f"--pysandboxes-config={project / 'rules.py-sandboxes'}",
        "--os-sandbox=landlock",
        f"--denials={denials}",
        str(script),
    ]
    proc = run_sb(args, cwd=project, env=base_env(home))
    assert proc.returncode == 0, proc.stderr
    assert "other refused" in proc.stdout
    assert not (logs / "other.txt").exists()
    assert '"target": "json"' in denials.read_text()
