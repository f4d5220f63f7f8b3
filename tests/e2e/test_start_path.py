"""The one start path (``launch/start.py``, issue 24) as partial mode's workers see it.

Every sandboxed interpreter -- a program, an audit or learning run, a partial-mode worker, an
eval worker -- is started by the same seam, so that a step done for the command line cannot be
missing for a worker. Each test here is a step the worker's former start path skipped:

- the guard's policy with the addresses of DENY names pinned (``net=DENY|*|localhost|*|OUT``
  beside ``net=ALLOW|*|*|*|OUT``: a connection to 127.0.0.1 is refused naming the DENY rule),
  under every provider that runs a worker; the command line's own refusal is the reference;
- the sweep of stale private temporary directories;
- the hand-over through ``launch/channel.py``, never a named file (a process without memfd).

Each attack has its control in the same run: the function connects when called in the host.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pysandboxes.providers import get_provider
from tests.helpers import PYTHON, base_env, require, run_sb

PROGRAM = Path(__file__).parent / "programs" / "start" / "worker_steps.py"
PROVIDERS = ["subprocess", "landlock", "bwrap", "unshare"]
DENY = "net=DENY|*|localhost|*|OUT"


def _available(provider: str) -> None:
    state = get_provider(provider).availability()
    require(state.ok, f"os-sandbox={provider}: {state.reason} ({state.install_hint})")


def _rules(work: Path, provider: str) -> None:
    (work / ".py-sandboxes").write_text(
        "learn=false\npy-sandbox=true\n"
        f"os-sandbox={provider}\n"
        f"{DENY}\nnet=ALLOW|*|*|*|OUT\npython-import=socket\n"
        f"expose-ro={PROGRAM.parent}\n"
    )


def _host(tmp_path: Path, provider: str, *checks: str, env: dict[str, str] | None = None) -> Any:
    work = tmp_path / "work"
    work.mkdir()
    _rules(work, provider)
    proc = subprocess.run(
        [PYTHON, str(PROGRAM), str(work), *checks],
        cwd=work,
        env=base_env(tmp_path, env),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _refused_by_deny(outcome: dict[str, Any]) -> None:
    assert outcome.get("error") == "RuleConnectionRefusedError", outcome
    assert [(d["kind"], d["rule"]) for d in outcome["denials"]] == [("net", DENY)], outcome


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_worker_refuses_the_addresses_of_a_deny_name(tmp_path: Path, provider: str) -> None:
    _available(provider)
    report = _host(tmp_path, provider)
    assert report["control"] == {"ok": "connected"}
    _refused_by_deny(report["sandboxed"])


def test_the_command_line_refuses_the_same_connection(tmp_path: Path) -> None:
    """The reference the workers are held to: ``python-sb prog.py`` under the same rules."""

    work = tmp_path / "work"
    work.mkdir()
    _rules(work, "subprocess")
    (work / ".py-sandboxes").write_text(
        (work / ".py-sandboxes").read_text() + f"expose-ro={work}\npython-import=json\n"
    )
    (work / "prog.py").write_text(
        "import json, socket, sys\n"
        "from pysandboxes import sandbox_denials\n"
        "try:\n"
        "    socket.create_connection(('127.0.0.1', 9), timeout=5)\n"
        "except Exception as exc:\n"
        "    print(json.dumps({'error': type(exc).__name__,\n"
        "        'denials': [d.to_dict() for d in sandbox_denials(exc)]}))\n"
    )
    proc = run_sb(["prog.py"], cwd=work, env=base_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    _refused_by_deny(json.loads(proc.stdout))


def test_a_worker_start_sweeps_stale_temporary_directories(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    # A directory of a run whose process is gone (pid 2**22 + 1 is above pid_max's default).
    stale = tmp / f"pysb-{(1 << 22) + 1}-0123456789"
    stale.mkdir()
    (stale / "left-behind").write_text("x")
    report = _host(tmp_path, "subprocess", env={"TMPDIR": str(tmp), "STALE": str(stale)})
    assert report["stale_left"] is False
    assert not stale.exists()


@pytest.mark.parametrize("provider", ["subprocess", "landlock"])
def test_a_worker_is_handed_its_policy_through_no_named_file(tmp_path: Path, provider: str) -> None:
    """Without memfd (as on macOS) the hand-over is a pipe (``launch/channel.py``): the host's
    own audit hook sees no file of the hand-over opened while the worker starts."""

    _available(provider)
    report = _host(tmp_path, provider, "no-memfd", env={"TMPDIR": str(tmp_path)})
    assert "error" in report["sandboxed"] or "ok" in report["sandboxed"]  # the worker ran
    assert report["named_files"] == []


REFUSED_WORKER = """
import json, sys
from pysandboxes import ConfigError, sandbox, sandboxes

@sandbox
def f():
    return 1

try:
    with sandboxes(rules=sys.argv[1]):
        f()
except ConfigError as exc:
    print(json.dumps({"error": "ConfigError", "problems": [p.where for p in exc.problems],
                      "message": str(exc)}))
"""


@pytest.mark.parametrize(
    ("provider", "why"),
    [("none", "runs in the caller's own interpreter"), ("qemu", "does not cross into it")],
)
def test_a_provider_that_cannot_hold_a_worker_is_refused(
    tmp_path: Path, provider: str, why: str
) -> None:
    """``none`` runs in the caller's process, qemu's VM takes no descriptor of the host: a
    worker under either is refused before anything starts, naming the rule (no VM boots)."""

    rules = tmp_path / ".py-sandboxes"
    rules.write_text(f"learn=false\nos-sandbox={provider}\n")
    proc = subprocess.run(
        [PYTHON, "-c", REFUSED_WORKER, str(rules)],
        cwd=tmp_path,
        env=base_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["problems"] == [".py-sandboxes(2)"], report  # shown relative to the cwd
    # (where the platform has no kernel provider at all, qemu is refused as unavailable first)
    assert why in report["message"] or "cannot run here" in report["message"], report


def test_an_eval_rule_no_profile_may_grant_is_refused_before_the_start(tmp_path: Path) -> None:
    """Found by the conformance matrix's eval column: ``guarded_eval(rules=...)`` refuses
    ``eval-import=socket`` in the host, while ``python-sb`` started the program and its guard
    crashed arming the rule (a traceback, exit status 1). The start path checks the eval-*
    rules first (through the eval extension), as every other rule: exit status 2, nothing
    run, the line named."""

    (tmp_path / ".py-sandboxes").write_text(
        f"learn=false\nexpose-ro={tmp_path}\npython-import=pysandboxes\n"
        "eval-syntax=import\neval-import=socket\n"
    )
    (tmp_path / "prog.py").write_text("print('the program ran')\n")
    proc = run_sb(["prog.py"], cwd=tmp_path, env=base_env(tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert "the program ran" not in proc.stdout
    assert ".py-sandboxes(5): eval-import=socket: module socket cannot be granted" in proc.stderr
    assert "Traceback" not in proc.stderr
