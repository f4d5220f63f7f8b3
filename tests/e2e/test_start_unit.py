"""The guard's modules come from one unit in the child (``launch/unit.py``), and only when it
stands for their sources: a stale unit changes nothing of what the guard refuses.

The runs on a copy of the package (``-m pysandboxes`` with the copy first on ``PYTHONPATH``)
build, age and remove the copy's unit; the tree under test is never edited.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import pysandboxes
from pysandboxes.launch import unit
from tests.helpers import base_env, require, run_python, run_sb
from tests.unit.launch.test_unit import mark_unit

PACKAGE = Path(pysandboxes.__file__).resolve().parent

#: What the program reports: the package's modules it finds loaded, the loader of one of the
#: guard's, whether the marked module ran from the unit (``mark_unit``), whether a finder of
#: the unit is still on sys.meta_path, and a refused read.
PROGRAM = """\
import sys
names = sorted(m for m in sys.modules if m == "pysandboxes" or m.startswith("pysandboxes."))
print("MODULES", " ".join(names))
hook = sys.modules["pysandboxes.guard.hook"]
print("LOADER", type(hook.__loader__).__name__, hook.__file__, hook.__cached__)
print("FROM_UNIT", hasattr(sys.modules["pysandboxes.guard.tcl"], "UNIT_MARKER"))
print("FINDERS", [type(f).__name__ for f in sys.meta_path])
try:
    open(sys.argv[1]).read()
    print("READ")
except PermissionError as exc:
    print("REFUSED", type(exc).__name__)
"""


def _report(output: str) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in output.splitlines() if " " in line)


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    path = hidden / "secret.txt"
    path.write_text("secret\n")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    where = tmp_path / "project"
    where.mkdir()
    (where / "report.py").write_text(PROGRAM)
    (where / ".py-sandboxes").write_text("os-sandbox=subprocess\nexpose-ro=.\n")
    return where


def test_the_child_loads_the_units_modules_and_no_other_module_of_the_package(
    project: Path, home: Path, secret: Path
) -> None:
    unit.build(str(PACKAGE))  # as the command line's process or scripts/setup.sh writes it

    result = run_sb(["report.py", str(secret)], cwd=project, env=base_env(home))

    assert result.returncode == 0, result.stderr
    report = _report(result.stdout)
    assert report["MODULES"].split() == sorted(unit.GUARD)
    loader, file, cached = report["LOADER"].split()
    assert loader == "SourceFileLoader"  # the import system's own, unit or not
    assert file == str(PACKAGE / "guard" / "hook.py")
    assert cached == str(PACKAGE / "guard" / "__pycache__" / Path(cached).name)
    assert "_Finder" not in report["FINDERS"]  # off sys.meta_path before the program ran
    assert report["REFUSED"] == "RulePermissionError"


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    """A copy of the package (its compiled accelerator included), without caches."""

    src = tmp_path / "copy" / "src"
    shutil.copytree(PACKAGE, src / "pysandboxes", ignore=shutil.ignore_patterns("__pycache__"))
    return src


def _run_copy(src: Path, project: Path, home: Path, secret: Path, **extra: str) -> dict[str, str]:
    env = base_env(home, {"PYTHONPATH": str(src), **extra})
    result = run_python(["-m", "pysandboxes", "report.py", str(secret)], cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    report = _report(result.stdout)
    assert report["LOADER"].split()[1] == str(src / "pysandboxes" / "guard" / "hook.py")
    return report


def test_the_command_line_writes_a_missing_unit_before_its_child_starts(
    package_copy: Path, project: Path, home: Path, secret: Path
) -> None:
    unit_path = Path(unit.unit_file(str(package_copy / "pysandboxes")))

    first = _run_copy(package_copy, project, home, secret, PYTHONDONTWRITEBYTECODE="1")
    assert not unit_path.exists()  # a cache, as the .pyc files: not written under -B
    assert first["REFUSED"] == "RulePermissionError"

    second = _run_copy(package_copy, project, home, secret)
    assert unit_path.exists()
    assert second["REFUSED"] == "RulePermissionError"
    assert second["MODULES"] == first["MODULES"]
    mark_unit(package_copy / "pysandboxes")  # now tell whether the next child reads it
    third = _run_copy(package_copy, project, home, secret)
    assert third["FROM_UNIT"] == "True"
    assert third["LOADER"].split()[0] == "SourceFileLoader"
    assert third["REFUSED"] == "RulePermissionError"


def test_a_stale_unit_is_not_used_and_the_guard_refuses_as_before(
    package_copy: Path, project: Path, home: Path, secret: Path
) -> None:
    unit.build(str(package_copy / "pysandboxes"))
    mark_unit(package_copy / "pysandboxes")
    fresh = _run_copy(package_copy, project, home, secret)
    assert fresh["FROM_UNIT"] == "True"

    files = package_copy / "pysandboxes" / "guard" / "files.py"
    files.write_text(files.read_text() + "\n# an edit after the unit was written\n")
    stale = _run_copy(package_copy, project, home, secret)

    assert stale["FROM_UNIT"] == "False"  # every module the usual way
    assert stale["REFUSED"] == "RulePermissionError"
    assert stale["MODULES"] == fresh["MODULES"]
    assert "_Finder" not in stale["FINDERS"]


def test_a_damaged_unit_is_not_used(
    package_copy: Path, project: Path, home: Path, secret: Path
) -> None:
    path = Path(unit.build(str(package_copy / "pysandboxes")))
    path.write_bytes(path.read_bytes()[:1000])

    report = _run_copy(package_copy, project, home, secret, PYTHONDONTWRITEBYTECODE="1")

    assert report["FROM_UNIT"] == "False"
    assert report["REFUSED"] == "RulePermissionError"


#: Run in a python process as the entry script runs ``cli.main``, until the exec of the child:
#: the package's modules then loaded, whether a unit's marked module (argv[1]) ran from it,
#: and whether a unit's finder is still first on sys.meta_path (it is, at an exec: nothing of
#: this process's state survives it).
PARENT = """\
import os, sys
marked = sys.argv.pop(1)
def exec_instead(*args, **kwargs):
    names = sorted(m for m in sys.modules if m.startswith("pysandboxes"))
    print("MODULES", " ".join(names))
    print("FROM_UNIT", hasattr(sys.modules[marked], "UNIT_MARKER"))
    print("FIRST_FINDER", type(sys.meta_path[0]).__name__)
    sys.stdout.flush()
    os._exit(0)
os.execv = os.execve = exec_instead
sys.argv = ["python-sb", *sys.argv[1:]]
from pysandboxes.launch.cli import main
main()
"""


@pytest.mark.parametrize(
    ("kind", "provider", "marked"),
    [
        ("launcher", "subprocess", "pysandboxes.launch.tmpdir"),
        ("landlock", "landlock", "pysandboxes.providers.seccomp"),
    ],
)
def test_the_command_lines_start_imports_each_units_modules_from_it(
    package_copy: Path,
    project: Path,
    home: Path,
    secret: Path,
    kind: str,
    provider: str,
    marked: str,
) -> None:
    if provider == "landlock":
        from pysandboxes.providers import landlock

        require(landlock.landlock_abi() >= 1, "Landlock is not enabled in this kernel")
    for each in unit.UNITS:
        unit.build(str(package_copy / "pysandboxes"), each)
    mark_unit(package_copy / "pysandboxes", marked, kind)
    env = base_env(home, {"PYTHONPATH": str(package_copy), "PYTHONDONTWRITEBYTECODE": "1"})

    result = run_python(
        ["-c", PARENT, marked, f"--os-sandbox={provider}", "report.py", str(secret)],
        cwd=project,
        env=env,
    )

    assert result.returncode == 0, result.stderr
    report = _report(result.stdout)
    assert set(unit.UNITS[kind]) <= set(report["MODULES"].split())  # none of it unused
    assert report["FROM_UNIT"] == "True"
    assert report["FIRST_FINDER"] == "_Finder"


def test_a_program_of_os_sandbox_none_runs_with_no_finder_of_a_unit(
    package_copy: Path, project: Path, home: Path, secret: Path
) -> None:
    unit.build(str(package_copy / "pysandboxes"), "launcher")
    mark_unit(package_copy / "pysandboxes", "pysandboxes.launch.tmpdir", "launcher")
    (project / ".py-sandboxes").write_text("os-sandbox=none\nexpose-ro=.\n")
    env = base_env(home, {"PYTHONPATH": str(package_copy), "PYTHONDONTWRITEBYTECODE": "1"})

    result = run_python(["-m", "pysandboxes", "report.py", str(secret)], cwd=project, env=env)

    assert result.returncode == 0, result.stderr
    report = _report(result.stdout)
    assert "_Finder" not in report["FINDERS"]  # off sys.meta_path when the start ended
    assert report["REFUSED"] == "RulePermissionError"


def test_plain_python_reads_the_file_the_guard_refuses(
    project: Path, home: Path, secret: Path
) -> None:
    """Control: without python-sb the program's read succeeds (the refusals above are the
    guard's)."""

    result = run_python(
        ["-c", "import sys; open(sys.argv[1]).read(); print('READ')", str(secret)],
        cwd=project,
        env=base_env(home),
    )
    assert result.stdout.strip() == "READ", result.stderr
