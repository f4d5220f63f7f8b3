"""The import system's listing of sys.path directories is not the program's access.

For ``-c`` and ``-m`` CPython puts the current directory on ``sys.path``; the path finder lists
it on every import, whatever the program imports. Where the current directory is not exposed,
that listing is refused quietly: no ``--denials`` line, no audit report, and a module there is
simply not found. (Learning still records listings: a directory the program put on sys.path
must be readable for its modules to be found when the learned rules are replayed.)
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


def test_audit_does_not_report_the_import_system_listing(
    tmp_path: Path, home: Path, project: Path
) -> None:
    result = run_sb(
        [f"--pysandboxes-config={_rules(tmp_path)}", "--audit", "-c", "import json"],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == 0, result.stderr
    assert str(project) not in result.stderr
