"""Probes are no denials (docs/python-layer.md, *Probes*), through the real ``python-sb``
under the Python layer alone and with landlock: ``try: import winreg`` gets CPython's
``ModuleNotFoundError`` and writes nothing to ``--denials``; a module that exists and that no
rule allows is refused and logged as before. The control (plain CPython) imports it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_unshare_e2e import provider_ok
from tests.helpers import base_env, run_python, run_sb

PROGRAM = """
import pysandboxes
for name in ("winreg", "no_such_module_here", "socket"):
    try:
        __import__(name)
        print(name, "imported")
    except ImportError as exc:
        print(name, type(exc).__name__, len(pysandboxes.sandbox_denials(exc)))
"""


@pytest.mark.parametrize("provider", ["subprocess", "landlock"])
def test_only_the_refusal_of_an_existing_module_is_logged(
    provider: str, project: Path, home: Path
) -> None:
    provider_ok(provider)
    (project / "main.py").write_text(
        PROGRAM.replace("import pysandboxes\n", "", 1).replace(
            ", len(pysandboxes.sandbox_denials(exc))", ""
        )
    )
    control = run_python(["main.py"], cwd=project, env=base_env(home))
    assert "socket imported" in control.stdout.splitlines(), control.stderr
    (project / "main.py").write_text(PROGRAM)
    (project / ".py-sandboxes").write_text(f"expose-ro={project}\n")
    denials = project.parent / "denials.jsonl"
    result = run_sb(
        [f"--os-sandbox={provider}", f"--denials={denials}", "main.py"],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "winreg ModuleNotFoundError 0",
        "no_such_module_here ModuleNotFoundError 0",
        "socket RuleModuleNotFoundError 1",
    ], result.stderr
    logged = [json.loads(line) for line in denials.read_text().splitlines()]
    assert [(d["kind"], d["target"]) for d in logged] == [("import", "socket")]
