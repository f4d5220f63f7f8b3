"""An uncaught refusal's traceback shows the program's frames only (SPEC §1).

The Python layer checks ``import`` statements with a Python ``builtins.__import__`` and raises
refusals from its audit hook; neither leaves a frame in what the user sees. Control: plain
python3 given the same programs with a module that does not exist shows the same frames.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import base_env, run_python, run_sb

#: program -> the helper module it imports (which imports MODULE at its line 2)
PROGRAMS = {
    "by_statement.py": "import helper\n",
    "by_builtin.py": "__import__('MODULE')\n",
    "in_function.py": "def load():\n    import MODULE\n\n\nload()\n",
    "chained.py": (
        "def load():\n"
        "    try:\n"
        "        import helper\n"
        "    except ImportError as exc:\n"
        "        raise RuntimeError('cannot start') from exc\n"
        "\n"
        "\n"
        "load()\n"
    ),
}
HELPER = "# a library of the program\nimport MODULE\n"


def _frames(stderr: str) -> list[tuple[str, str]]:
    return re.findall(r'^  File "([^"]+)", line (\d+)', stderr, flags=re.M)


def _write(where: Path, module: str) -> None:
    where.mkdir()
    for name, text in PROGRAMS.items():
        (where / name).write_text(text.replace("MODULE", module))
    (where / "helper.py").write_text(HELPER.replace("MODULE", module))


@pytest.mark.parametrize("program", list(PROGRAMS))
def test_refused_import_shows_only_the_programs_frames(
    tmp_path: Path, home: Path, program: str
) -> None:
    sandboxed, plain = tmp_path / "sandboxed", tmp_path / "plain"
    _write(sandboxed, "socket")
    _write(plain, "no_such_module_for_this_test")
    (sandboxed / ".py-sandboxes").write_text(f"expose-ro={sandboxed}\npython-import=helper\n")
    env = base_env(home)

    result = run_sb(["--os-sandbox=subprocess", program], cwd=sandboxed, env=env, timeout=60)
    control = run_python([program], cwd=plain, env=env, timeout=60)

    assert result.returncode == control.returncode == 1
    assert "RuleModuleNotFoundError: Module named 'socket' is not allowed" in result.stderr
    assert "ModuleNotFoundError: No module named 'no_such_module_for_this_test'" in control.stderr
    ours = [(Path(f).name, line) for f, line in _frames(result.stderr)]
    theirs = [(Path(f).name, line) for f, line in _frames(control.stderr)]
    assert ours == theirs, result.stderr
    assert all(Path(f).parent == sandboxed for f, _ in _frames(result.stderr)), result.stderr
    assert "pysandboxes" not in result.stderr.replace("pysandboxes.errors.", "")
