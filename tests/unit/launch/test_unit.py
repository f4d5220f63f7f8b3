"""The guard's unit (``launch/unit.py``): written from the sources, used only while it stands for
them, ignored as a whole otherwise.

Each test works on a copy of the package in a temporary directory: the unit of the copy is
built, checked, and made stale or unreadable there, never in the tree under test.
"""

from __future__ import annotations

import marshal
import os
import shutil
import sys
from pathlib import Path

import pytest

import pysandboxes
from pysandboxes.launch import unit

PACKAGE = Path(pysandboxes.__file__).resolve().parent


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A copy of the package's sources (no caches, no unit)."""

    copy = tmp_path / "src" / "pysandboxes"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    return copy


@pytest.mark.parametrize("kind", sorted(unit.UNITS))
def test_a_built_unit_holds_the_code_of_every_module_as_the_import_system_compiles_it(
    package: Path, kind: str
) -> None:
    path = unit.build(str(package), kind)

    assert path == unit.unit_file(str(package), kind)
    assert Path(path).parent == package / "__pycache__"
    modules = unit.load(str(package), kind)
    assert modules is not None
    assert tuple(modules) == unit.UNITS[kind]
    other = next(k for k in unit.UNITS if k != kind)
    assert unit.load(str(package), other) is None  # each unit its own file
    for name, (file, is_package, code) in modules.items():
        expected = package.joinpath(*name.split(".")[1:])
        expected = expected / "__init__.py" if is_package else expected.with_suffix(".py")
        assert file == str(expected)
        assert code.co_filename == file
        compiled = compile(expected.read_bytes(), file, "exec", dont_inherit=True)
        assert code == compiled, name


def test_a_changed_source_makes_the_whole_unit_unused(package: Path) -> None:
    unit.build(str(package))
    source = package / "guard" / "files.py"
    status = source.stat()
    source.write_text(source.read_text() + "\n# edited\n")

    assert unit.load(str(package)) is None

    # The same size and another modification time: not used either.
    shutil.copy(PACKAGE / "guard" / "files.py", source)
    os.utime(source, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000_000))
    assert unit.load(str(package)) is None
    # Back to the recorded stamp: the unit stands for the source again.
    os.utime(source, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert unit.load(str(package)) is not None


@pytest.mark.parametrize(
    "damage",
    ["empty", "truncated", "garbage", "no index line", "index of another format"],
)
def test_an_unreadable_unit_is_ignored(package: Path, damage: str) -> None:
    path = Path(unit.build(str(package)))
    data = path.read_bytes()
    head_length = int(data[: data.index(b"\n")])
    damaged = {
        "empty": b"",
        "truncated": data[: len(data) // 2],
        "garbage": b"12\n" + os.urandom(4096),
        "no index line": data[data.index(b"\n") + 1 :],
        "index of another format": (
            b"%d\n" % head_length
            + data[data.index(b"\n") + 1 :].replace(b"pysb-unit-1", b"pysb-unit-0", 1)
        ),
    }[damage]
    path.write_bytes(damaged)

    assert unit.load(str(package)) is None


def test_a_unit_of_another_directory_or_optimisation_level_is_not_used(
    package: Path, tmp_path: Path
) -> None:
    unit.build(str(package))
    moved = tmp_path / "elsewhere" / "pysandboxes"
    shutil.copytree(package, moved)  # the unit's code names the first copy's files

    assert unit.load(str(moved)) is None
    assert unit.load(str(package)) is not None
    index_line, rest = Path(unit.unit_file(str(package))).read_bytes().split(b"\n", 1)
    head = marshal.loads(rest[: int(index_line)])
    assert head[2] == sys.flags.optimize  # the level is part of what must match


@pytest.mark.parametrize("forgery", ["another file for a module", "data for a module's code"])
def test_a_unit_naming_other_files_or_holding_other_objects_is_not_used(
    package: Path, tmp_path: Path, forgery: str
) -> None:
    """The index must name each module's own file of this package, and the code part hold code
    objects only: a unit rewritten otherwise (by whoever can write ``__pycache__``) is unused."""

    path = Path(unit.build(str(package)))
    data = path.read_bytes()
    line = data.index(b"\n")
    end = line + 1 + int(data[:line])
    head = list(marshal.loads(data[line + 1 : end]))
    codes = list(marshal.loads(data[end:]))
    if forgery == "another file for a module":
        elsewhere = tmp_path / "elsewhere.py"
        elsewhere.write_text("print('not the guard')\n")
        status = elsewhere.stat()
        index = list(head[4])
        name, _path, is_package, _mtime, _size = index[-1]
        index[-1] = (name, str(elsewhere), is_package, status.st_mtime_ns, status.st_size)
        head[4] = tuple(index)
        codes[-1] = compile(elsewhere.read_text(), str(elsewhere), "exec")
    else:
        codes[-1] = "print('not code')"
    new_head = marshal.dumps(tuple(head))
    path.write_bytes(b"%d\n" % len(new_head) + new_head + marshal.dumps(tuple(codes)))

    assert unit.load(str(package)) is None


def test_a_missing_module_file_makes_the_unit_unused(package: Path) -> None:
    unit.build(str(package))
    (package / "guard" / "tcl.py").unlink()

    assert unit.load(str(package)) is None


def test_ensure_writes_the_missing_units_but_not_under_dont_write_bytecode(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    unit.ensure(str(package))
    assert not (package / "__pycache__").exists()

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    unit.build(str(package), "guard")
    guard_file = Path(unit.unit_file(str(package), "guard"))
    guard_file.write_bytes(b"a unit that is there, however stale, is left alone")
    unit.ensure(str(package))
    assert unit.load(str(package), "launcher") is not None
    assert guard_file.read_bytes().startswith(b"a unit that is there")


def test_a_reinstalled_package_writes_its_own_unit_and_removes_the_previous_ones(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upgrade rewrites ``__init__.py`` (and the rest): its units get another name, so the
    previous install's stale units, which ``ensure`` would leave alone, are not in the way."""

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    unit.ensure(str(package))
    before = {kind: unit.unit_file(str(package), kind) for kind in unit.UNITS}
    init = package / "__init__.py"
    status = init.stat()
    files = package / "guard" / "files.py"
    files.write_text(files.read_text() + "\n# the new version\n")
    os.utime(init, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000_000))
    assert unit.load(str(package)) is None  # the new copy has no unit yet

    unit.ensure(str(package))

    for kind in unit.UNITS:
        assert unit.unit_file(str(package), kind) != before[kind]
        assert not Path(before[kind]).exists()
        assert unit.load(str(package), kind) is not None
    assert sorted(p.name.split(".")[0] for p in (package / "__pycache__").glob("*-unit.*")) == (
        sorted(f"{kind}-unit" for kind in unit.UNITS)
    )


def test_ensure_in_a_directory_that_cannot_be_written_leaves_the_run_alone(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    (package / "__pycache__").write_text("a file where the cache directory would be")

    unit.ensure(str(package))  # no exception: the child imports the usual way

    assert unit.load(str(package)) is None


def mark_unit(package: Path, name: str = "pysandboxes.guard.tcl", kind: str = "guard") -> None:
    """Rewrite unit ``kind`` of ``package`` with module ``name``'s code compiled from its source
    plus ``UNIT_MARKER = 1``, its recorded stamp unchanged: a module that has the marker was run
    from the unit."""

    path = Path(unit.unit_file(str(package), kind))
    data = path.read_bytes()
    line = data.index(b"\n")
    end = line + 1 + int(data[:line])
    head = marshal.loads(data[line + 1 : end])
    codes = list(marshal.loads(data[end:]))
    position = [entry[0] for entry in head[4]].index(name)
    source_path = head[4][position][1]
    source = Path(source_path).read_text() + "\nUNIT_MARKER = 1\n"
    codes[position] = compile(source, source_path, "exec", dont_inherit=True)
    path.write_bytes(data[:end] + marshal.dumps(tuple(codes)))


def test_the_finder_runs_the_units_code_and_leaves_the_usual_loader(package: Path) -> None:
    from importlib.machinery import SourceFileLoader
    from importlib.util import module_from_spec

    unit.build(str(package))
    mark_unit(package)
    before = list(sys.meta_path)
    with unit.installed(str(package)) as used:
        assert used
        finder = sys.meta_path[0]
        spec = finder.find_spec("pysandboxes.guard.tcl")
        assert spec.origin == str(package / "guard" / "tcl.py")
        assert spec.cached == str(
            package / "guard" / "__pycache__" / f"tcl.{sys.implementation.cache_tag}.pyc"
        )
        assert spec.submodule_search_locations is None
        package_spec = finder.find_spec("pysandboxes.guard")
        assert package_spec.submodule_search_locations == [str(package / "guard")]
        assert finder.find_spec("json") is None  # only the unit's modules
        module = module_from_spec(spec)
        spec.loader.exec_module(module)
        assert module.UNIT_MARKER == 1  # the unit's code ran
        assert type(module.__loader__) is SourceFileLoader  # the import system's own
        assert module.__spec__.loader is module.__loader__
        assert module.__loader__.path == spec.origin
        # Handed out once: the same module again is loaded from its file.
        again = finder.find_spec("pysandboxes.guard.tcl")
        assert again is None
    assert sys.meta_path == before
    with unit.installed(str(package / "nowhere")) as used:
        assert not used
        assert sys.meta_path == before
