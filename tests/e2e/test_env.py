"""The child's environment is built from ``env=``/``unenv=`` (SPEC §2.5, §3.4), through the real
command: only granted variables exist in the program, also in ``/proc/self/environ``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import base_env, run_python, run_sb

SHOW_ENV = (
    "import json, os\n"
    "raw = open('/proc/self/environ', 'rb').read()\n"
    "print(json.dumps({'environ': dict(os.environ), 'proc': raw.decode(errors='replace')}))\n"
)

RULES = """py-sandbox=false
env=EXACT_ONE=from-the-rule
env=EXACT_*=${EXACT_*}
env=KEEP=${KEEP}
env=DEFAULTED=${NOT_SET_ANYWHERE:-fallback}
unenv=EXACT_DROPPED
"""

HOST = {
    "EXACT_ONE": "host-one",
    "EXACT_TWO": "host-two",
    "EXACT_DROPPED": "host-dropped",
    "KEEP": "kept",
    "SECRET_TOKEN": "s3cr3t-value-never-granted",
}


@pytest.fixture
def env_project(project: Path) -> Path:
    (project / ".py-sandboxes").write_text(RULES)
    (project / "show_env.py").write_text(SHOW_ENV)
    return project


def test_subprocess_gets_only_granted_variables(env_project: Path, home: Path) -> None:
    env = base_env(home, HOST)
    result = run_sb(["--os-sandbox=subprocess", "show_env.py"], cwd=env_project, env=env)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    environ = seen["environ"]
    assert environ.pop("TMPDIR").startswith("/")
    environ.pop("LC_CTYPE", None)  # CPython's own C-locale coercion (PEP 538), as in python3
    assert environ == {
        "EXACT_ONE": "from-the-rule",  # an exact name beats the pattern
        "EXACT_TWO": "host-two",  # the pattern passes the host's value
        "KEEP": "kept",
        "DEFAULTED": "fallback",
    }
    # The secret is not hidden but absent: not in the process's initial environment either.
    assert "s3cr3t" not in seen["proc"]
    assert "SECRET_TOKEN" not in seen["proc"] and "EXACT_DROPPED" not in seen["proc"]
    assert "HOME=" not in seen["proc"] and "PATH=" not in seen["proc"]


def test_control_without_sandbox_sees_the_secret(env_project: Path, home: Path) -> None:
    result = run_python(["show_env.py"], cwd=env_project, env=base_env(home, HOST))
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["environ"]["SECRET_TOKEN"] == "s3cr3t-value-never-granted"
    assert "s3cr3t" in seen["proc"]


def test_none_filters_in_process(env_project: Path, home: Path) -> None:
    """``none`` runs in python-sb's own process: os.environ is replaced, and the block the
    process started with (what /proc/self/environ shows) is overwritten."""

    env = base_env(home, HOST)
    result = run_sb(["--os-sandbox=none", "show_env.py"], cwd=env_project, env=env)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    environ = seen["environ"]
    assert "SECRET_TOKEN" not in environ and "EXACT_DROPPED" not in environ
    assert environ["EXACT_ONE"] == "from-the-rule" and environ["EXACT_TWO"] == "host-two"
    assert "s3cr3t" not in seen["proc"] and "SECRET_TOKEN" not in seen["proc"]
    assert result.stderr == ""


def test_none_child_process_gets_the_filtered_environment(env_project: Path, home: Path) -> None:
    code = (
        "import subprocess; print(subprocess.run(['env'], capture_output=True, text=True).stdout)"
    )
    env = base_env(home, HOST)
    result = run_sb(["--os-sandbox=none", "-c", code], cwd=env_project, env=env)
    assert result.returncode == 0, result.stderr
    assert "s3cr3t" not in result.stdout and "EXACT_TWO=host-two" in result.stdout


def test_command_line_env_rule(env_project: Path, home: Path) -> None:
    result = run_sb(
        ["--env=EXTRA=given", "--unenv=KEEP", "show_env.py"],
        cwd=env_project,
        env=base_env(home, HOST),
    )
    assert result.returncode == 0, result.stderr
    environ = json.loads(result.stdout)["environ"]
    assert environ["EXTRA"] == "given" and "KEEP" not in environ


def test_python_variables_only_when_granted(env_project: Path, home: Path) -> None:
    """PYTHON* variables configure the child interpreter only when a rule passes them."""

    code = "import sys; print(sys.flags.optimize)"
    host = base_env(home, {"PYTHONOPTIMIZE": "2"})
    plain = run_python(["-c", code], cwd=env_project, env=host)
    assert plain.stdout == "2\n"
    assert run_sb(["-c", code], cwd=env_project, env=host).stdout == "0\n"
    granted = run_sb(
        ["--env=PYTHONOPTIMIZE=${PYTHONOPTIMIZE}", "-c", code], cwd=env_project, env=host
    )
    assert granted.stdout == "2\n", granted.stderr
