"""The bootstrap imports nothing from the program's directories before the guard is armed.

The child interpreter once started as ``python -c BOOTSTRAP``, so ``sys.path[0]`` was the
current directory until the bootstrap replaced ``sys.path``: a module the bootstrap imported
before that (``from __future__ import annotations`` in ``child.py`` did) was looked up in the
current directory first, so a ``__future__.py`` there ran unguarded, and the import system's
listing of that directory was cached where the program could read it. CPython 3.13 imports
``linecache`` for ``-c`` code before running it, through that same ``sys.path``: the child now
runs a file (``launch/boot.py``), whose directory is python-sb's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import base_env, run_python, run_sb

STANDINS = (
    "__future__",
    "atexit",
    "marshal",
    "pysandboxes_child",
    "pysandboxes_interpreter",
    "pysandboxes_unit",
    "pysandboxes",
    "linecache",
)
PLANTED = 'import os\nos.write(2, b"PLANTED {name} RAN\\n")\n'


@pytest.mark.parametrize("python_layer", ["true", "false"])
def test_no_module_of_the_current_directory_runs_before_the_program(
    tmp_path: Path, home: Path, python_layer: str
) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    for name in STANDINS:
        (cwd / f"{name}.py").write_text(PLANTED.replace("{name}", name))
    (cwd / ".py-sandboxes").write_text(f"py-sandbox={python_layer}\n")
    program = "import sys\nprint(sorted(k for k in sys.path_importer_cache if k))\n"

    result = run_sb(["--os-sandbox=subprocess", "-c", program], cwd=cwd, env=base_env(home))

    assert result.returncode == 0, result.stderr
    assert "PLANTED" not in result.stderr
    assert str(cwd) not in result.stdout  # nothing listed the directory for the program
    # Control: plain python does find a planted module there when something imports it (from
    # 3.13 its own linecache, before the -c code runs).
    control = run_python(["-c", "import __future__"], cwd=cwd, env=base_env(home))
    planted = {line for line in control.stderr.splitlines() if line.startswith("PLANTED ")}
    assert planted & {"PLANTED __future__ RAN", "PLANTED linecache RAN"}, control.stderr
