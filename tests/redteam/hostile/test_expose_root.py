"""Other processes under ``expose-ro=/`` (issue 27, cause 10).

An exposure of ``/`` bound the host's ``/proc`` over the sandbox's own under bwrap and unshare:
every host process was there to see (``/proc/PID/stat``, world-readable), which the sandbox's
PID namespace exists to hide. With ``expose-ro=/`` added to the rules, the attack reads a host
process's ``stat`` (and its ``environ``, as ``test_processes.py`` does without the exposure);
plain python reaches both as the control.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import run_sb
from tests.redteam.hostile.harness import (
    ATTACKS,
    Scene,
    assert_reached,
    assert_refused,
    expect_refusal,
    verdict_of,
)


def _sandboxed(scene: Scene, provider: str, program: str, *args: str) -> dict[str, Any]:
    proc = run_sb(
        [
            f"--pysandboxes-config={scene.rules_file}",
            f"--os-sandbox={provider}",
            "--py-sandbox=false",
            "--expose-ro=/",
            str(ATTACKS / program),
            *args,
        ],
        cwd=scene.work,
        env=scene.env(),
        timeout=120,
    )
    what = f"python-sb --os-sandbox={provider} --expose-ro=/ {program}"
    return verdict_of(proc.stdout, proc.stderr, proc.returncode, what)


@pytest.mark.kernel
@pytest.mark.parametrize(
    ("program", "secret"), [("proc_stat.py", False), ("proc_environ.py", True)]
)
def test_host_processes_stay_hidden_with_root_exposed(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene, program: str, secret: bool
) -> None:
    expect_refusal(request, kernel_provider, program.removesuffix(".py"))
    args = (str(scene.host_pid), scene.secret_text) if secret else (str(scene.host_pid),)
    assert_reached(scene.control(program, *args))
    verdict = _sandboxed(scene, kernel_provider, program, *args)
    assert_refused(verdict, ["EACCES", "EPERM", "ENOENT"], provider=kernel_provider)
