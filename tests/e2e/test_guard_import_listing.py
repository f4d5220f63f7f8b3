"""The import system's listing of sys.path directories is not the program's access.

For ``-c`` and ``-m`` CPython puts the current directory on ``sys.path``; the path finder lists
it on every import, whatever the program imports. Where the current directory is not exposed,
that listing is refused quietly: no ``--denials`` line, nothing learned (learning used to write
``expose-ro=.`` for every ``-c`` program), and a module there is simply not found.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import base_env, run_python, run_sb


def _rules(tmp_path: Path) -> Path:
    rules = tmp_path / "rules.py-sandboxes"
    rules.write_text("os-sandbox=subprocess\npython-import=json, localmod\n")
    return rules


def test_no_denial_for_the_import_system_listing(tmp_path: Path, home: Path, project: Path) -> None:
    denials = tmp_path / "denials.jsonl"
    result = run_sb(
        [
            f"--pysandboxes-config={_rules(tmp_path)}",
            f"--denials={denials}",
            "-c",
            "import json; print(json.dumps([1]))",
        ],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[1]\n"
    assert not denials.exists() or denials.read_text() == ""


def test_a_module_in_an_unexposed_directory_is_not_found(
    tmp_path: Path, home: Path, project: Path
) -> None:
    (project / "localmod.py").write_text("VALUE = 42\n")
    code = "import localmod; print(localmod.VALUE)"
    control = run_python(["-c", code], cwd=project)
    assert control.stdout == "42\n"
    result = run_sb(
        [f"--pysandboxes-config={_rules(tmp_path)}", "-c", code], cwd=project, env=base_env(home)
    )
    assert result.returncode == 1
    assert "ModuleNotFoundError: No module named 'localmod'" in result.stderr


def test_learning_a_c_program_does_not_grant_the_current_directory(
    tmp_path: Path, home: Path, project: Path
) -> None:
    learned = tmp_path / "learned.py-sandboxes"
    result = run_sb(
        [f"--learn={learned}", "-c", "import json; print(json.dumps(2))"],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == 0, result.stderr
    rules = [line for line in learned.read_text().splitlines() if not line.startswith("#")]
    assert "python-import=json" in rules
    assert not [line for line in rules if line.startswith("expose-")]
