"""Attack: make the launcher import a planted module before the Python layer is armed.

The bootstrap imports a few modules of its own (``runpy``, ``json``, python-sb's package) before
the guard is armed. A file planted in the current directory or in a granted ``PYTHONPATH``
directory must not stand in for them: there, it would run with no Python layer at all. Plain
python3 (the control) does import the planted ``runpy`` for ``-m``.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from tests.helpers import base_env, run_python, run_sb

PLANTED = "open({marker!r}, 'w').write('planted module ran')\nfrom os import *\n"


def plant(directory: Path, marker: Path) -> None:
    for name in ("runpy", "json", "zipfile", "atexit"):
        (directory / f"{name}.py").write_text(PLANTED.format(marker=str(marker)))


def test_planted_stdlib_names_are_not_imported_by_the_launcher(project: Path, home: Path) -> None:
    planted = project / "planted"
    planted.mkdir()
    marker = project / "pwned"
    plant(planted, marker)
    plant(project, marker)
    with zipfile.ZipFile(project / "app.pyz", "w") as archive:
        archive.writestr("__main__.py", "print('app ran')\n")
    # The child gets PYTHONPATH from another host variable: python-sb's own interpreter is not
    # the target here (it trusts its user's environment like any Python tool).
    (project / ".py-sandboxes").write_text("py-sandbox=false\nenv=PYTHONPATH=${PLANTED}\n")
    env = base_env(home, {"PLANTED": str(planted)})

    # Control: from that path, the planted file stands in for the standard library's module.
    control = run_python(
        ["-c", "import zipfile"], cwd=project, env={**env, "PYTHONPATH": str(planted)}
    )
    assert marker.exists(), control.stderr
    marker.unlink()

    # python-sb imports zipfile itself to recognise a zip application, before any guard.
    for provider in ("subprocess", "none"):
        result = run_sb([f"--os-sandbox={provider}", "app.pyz"], cwd=project, env=env)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "app ran\n"
        assert not marker.exists(), provider


def test_planted_modules_do_not_replace_the_guard(project: Path, home: Path) -> None:
    """With the Python layer on, the bootstrap imports json and python-sb's package before
    arming: neither may come from the current directory or a granted PYTHONPATH."""

    planted = project / "planted"
    (planted / "pysandboxes" / "guard").mkdir(parents=True)
    marker = project / "pwned"
    plant(planted, marker)
    plant(project, marker)
    fake = PLANTED.format(marker=str(marker))
    (planted / "pysandboxes" / "__init__.py").write_text(fake)
    (planted / "pysandboxes" / "guard" / "__init__.py").write_text(fake + "def arm(*a): pass\n")
    (project / ".py-sandboxes").write_text(
        f"py-sandbox=true\nenv=PYTHONPATH=${{PLANTED}}\nexpose-ro={project}\n"
    )
    env = base_env(home, {"PLANTED": str(planted)})
    result = run_sb(["-c", "print('ran')"], cwd=project, env=env)
    assert not marker.exists(), result.stderr


def test_program_still_sees_its_own_modules_first(project: Path, home: Path) -> None:
    """CPython semantics are kept for the program: its directory comes first in sys.path."""

    (project / "json.py").write_text("VALUE = 'the project json'\n")
    (project / "main.py").write_text("import json\nprint(json.VALUE)\n")
    (project / ".py-sandboxes").write_text("py-sandbox=false\n")
    plain = run_python(["main.py"], cwd=project, env=base_env(home))
    sandboxed = run_sb(["main.py"], cwd=project, env=base_env(home))
    assert plain.stdout == sandboxed.stdout == "the project json\n", sandboxed.stderr
