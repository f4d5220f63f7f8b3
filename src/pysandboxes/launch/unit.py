"""python-sb's start-up modules loaded as one unit per process (issue 29, start-up).

Arming the guard imports 36 of python-sb's modules in the child, and the command line's
process imports some 20 more to start a run. Through the path-based import system each one
costs a search, a ``stat`` of its source, an open and a read of its ``.pyc``, a check of its
header, and its own unmarshalling: a fifth of the instructions those imports take
(docs/performance.md, "Eighth pass"). A *unit* is one file holding the code objects of one of
those sets, marshalled together (the names they share are stored once):
``__pycache__/guard-unit.TAG.STAMP.bin`` (the child's, :data:`GUARD`),
``launcher-unit...`` (the command line's, :data:`LAUNCHER`) and ``landlock-unit...`` in the
package's directory, next to the ``.pyc`` files they stand for (``STAMP``: the package's
``__init__.py``'s, :func:`unit_file`).

A unit is a cache with the ``.pyc`` files' trust and their checks, never a second source of
code:

- written from the sources (compiled as the import system compiles them) by the command line's
  process when it is missing (:func:`ensure`, not under ``-B``/``PYTHONDONTWRITEBYTECODE``), or
  by ``python -m pysandboxes.launch.unit`` (``scripts/setup.sh``), atomically;
- used only when every one of its modules' source files still has the modification time and
  size recorded for it, under the same interpreter (magic number, cache tag), optimisation
  level and package directory; otherwise ignored as a whole (the imports go the usual way: the
  run is as correct, only slower), as is a file that cannot be read or decoded;
- served by a finder that is on ``sys.meta_path`` only during python-sb's own start
  (:func:`installed`): in the child while the bootstrap imports and arms the guard, in the
  command line's process until it execs the child or its start ends (``interpreter.settle_heap``:
  before a program of ``os-sandbox=none`` runs, before python-sb waits for a child). Each module
  is handed the import system's own ``SourceFileLoader`` of its file before it runs: its
  ``__file__``, ``__spec__``, ``__loader__``, ``__cached__`` and source are what a plain import
  gives, and no object of this file stays within the program's reach.

Loaded by path in the child (``launch/boot.load_beside``), like ``child.py``: standard library
only, nothing heavier than ``os``, ``sys`` and ``marshal``.
"""

import marshal
import os
import sys

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

#: The first item of a unit; a file of another format is ignored.
FORMAT = "pysb-unit-1"

#: The modules the guard's arming imports (``child.import_guard`` and ``guard.arm``), in an
#: order their imports allow. ``tests/e2e/test_start_unit.py`` checks that a child loads these
#: and no other module of the package, so the list cannot drift from the code.
GUARD = (
    "pysandboxes",
    "pysandboxes.record",
    "pysandboxes.errors",
    "pysandboxes.platform_caps",
    "pysandboxes.policy",
    "pysandboxes.policy.model",
    "pysandboxes.runtime",
    "pysandboxes.guard",
    "pysandboxes.guard.accelerator",
    "pysandboxes.guard.kit",
    "pysandboxes.guard.denials",
    "pysandboxes.guard.frames",
    "pysandboxes.guard.calls",
    "pysandboxes.guard.evalbuiltins",
    "pysandboxes.guard.paths",
    "pysandboxes.guard.file_events",
    "pysandboxes.guard.file_judges",
    "pysandboxes.guard.file_refusals",
    "pysandboxes.guard.sqlite",
    "pysandboxes.guard.sqlite_handlers",
    "pysandboxes.policy.defaults",
    "pysandboxes.guard.files",
    "pysandboxes.guard.imports",
    "pysandboxes.guard.net_sockets",
    "pysandboxes.guard.net_address",
    "pysandboxes.guard.net_names",
    "pysandboxes.guard.network",
    "pysandboxes.guard.signals",
    "pysandboxes.guard.native_files",
    "pysandboxes.guard.wrappers",
    "pysandboxes.guard.descriptors",
    "pysandboxes.guard.hook",
    "pysandboxes.policy.precedence",
    "pysandboxes.policy.decide",
    "pysandboxes.policy.netrules",
    "pysandboxes.guard.tcl",
)

#: The modules the command line's process imports to start a run, after those imported before
#: ``cli.main`` installs the unit's finder (the entry script's ``pysandboxes``, ``errors``,
#: ``record``, ``launch``, ``cli`` and ``argv``, then ``interpreter`` and this file) and before
#: it execs the child: those of every provider, and ``subprocess``'s (the default).
#: ``tests/e2e/test_start_unit.py`` checks that such a run imports each of them from the unit.
LAUNCHER = (
    "pysandboxes.launch.start",
    "pysandboxes.policy.model",
    "pysandboxes.policy",
    "pysandboxes.policy.locate",
    "pysandboxes.policy.keys",
    "pysandboxes.policy.syntax",
    "pysandboxes.policy.template",
    "pysandboxes.policy.loader",
    "pysandboxes.policy.decide",
    "pysandboxes.providers",
    "pysandboxes.providers.base",
    "pysandboxes.providers.subproc",
    "pysandboxes.policy.defaults",
    "pysandboxes.launch.tmpdir",
    "pysandboxes.runtime",
    "pysandboxes.platform_caps",
    "pysandboxes.launch.channel",
    "pysandboxes.launch.wire",
    "pysandboxes.providers.descriptors",
)

#: The modules ``os-sandbox=landlock`` adds to the command line's start (its provider, the
#: seccomp filter, the system calls, the notices): a unit of its own, so that other runs do not
#: decode them (``interpreter.start_unit`` installs it when the provider is chosen).
LANDLOCK = (
    "pysandboxes.providers._linux",
    "pysandboxes.providers.limits",
    "pysandboxes.policy.netrules",
    "pysandboxes.providers.landlock",
    "pysandboxes.providers.edge_rules",
    "pysandboxes.providers.seccomp",
)

#: The units: the child's (``guard``), the command line's (``launcher``), and the command
#: line's modules of a provider, named as the provider.
UNITS = {"guard": GUARD, "launcher": LAUNCHER, "landlock": LANDLOCK}


def copy_stamp(package_dir: str) -> str:
    """The stamp of this copy of the package in the names of its units: the modification time
    and size of its ``__init__.py``, which an upgrade or a reinstall rewrites, so that such a
    copy writes units of its own instead of finding a previous one's stale on every start (a
    stale unit is not rewritten: see :func:`ensure`). ``OSError`` when that file cannot be
    read."""

    status = os.stat(os.path.join(package_dir, "__init__.py"))
    return f"{status.st_mtime_ns:x}-{status.st_size:x}"


def unit_file(package_dir: str, kind: str = "guard", stamp: "str | None" = None) -> str:
    """Where unit ``kind`` of the package in ``package_dir`` is, for this interpreter and this
    copy of the package (``stamp``: :func:`copy_stamp`'s, asked for when not given)."""

    if stamp is None:
        stamp = copy_stamp(package_dir)
    tag = sys.implementation.cache_tag or "none"
    return os.path.join(package_dir, "__pycache__", f"{kind}-unit.{tag}.{stamp}.bin")


def _remove_others(target: str, kind: str) -> None:
    """Remove the units of ``kind`` for this interpreter other than ``target`` (those of
    a previous copy of the package: see :func:`copy_stamp`)."""

    folder, own = os.path.split(target)
    prefix = f"{kind}-unit.{sys.implementation.cache_tag or 'none'}."
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name != own and name.startswith(prefix) and name.endswith(".bin"):
            try:  # noqa: SIM105 (no contextlib import: this file is loaded in every child)
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass


def _source_of(package_dir: str, name: str) -> "tuple[str, bool]":
    """The source file of module ``name`` of the package in ``package_dir``, and whether the
    module is a package (whether its ``__init__.py`` is there)."""

    is_package = os.path.isfile(_expected_source(package_dir, name, True))
    return _expected_source(package_dir, name, is_package), is_package


def _expected_source(package_dir: str, name: str, is_package: object) -> str:
    """The source path module ``name`` has in the package in ``package_dir`` (its
    ``__init__.py`` when ``is_package`` is ``True``), from the names alone: what an index entry
    must name (:func:`_source_of` asks the files which it is)."""

    folder = os.path.join(package_dir, *name.split(".")[1:])
    return os.path.join(folder, "__init__.py") if is_package is True else folder + ".py"


def _magic() -> bytes:
    from _frozen_importlib_external import MAGIC_NUMBER  # type: ignore[import-not-found]

    return bytes(MAGIC_NUMBER)


def build(package_dir: str, kind: str = "guard") -> str:
    """Write unit ``kind`` of the package in ``package_dir`` from its sources (compiled as the
    import system compiles a source file) and return its path; ``OSError`` when it cannot be
    written. Atomic: a reader sees the old file or the new one.

    The file: the length of the index as a decimal line, the index (the format, the
    interpreter's magic number, the optimisation level, the package directory, and each
    module's name, source path, whether it is a package, and its source's modification time and
    size), then the code objects in the index's order: a reader checks the sources before it
    decodes any code."""

    package_dir = os.path.abspath(package_dir)
    index = []
    codes = []
    for name in UNITS[kind]:
        path, is_package = _source_of(package_dir, name)
        with open(path, "rb") as source_file:
            status = os.fstat(source_file.fileno())
            source = source_file.read()
        codes.append(compile(source, path, "exec", dont_inherit=True, optimize=sys.flags.optimize))
        index.append((name, path, is_package, status.st_mtime_ns, status.st_size))
    head = marshal.dumps((FORMAT, _magic(), sys.flags.optimize, package_dir, tuple(index)))
    data = b"%d\n" % len(head) + head + marshal.dumps(tuple(codes))
    target = unit_file(package_dir, kind)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    # The package's one atomic write (only the command line's process builds: never the child).
    from pysandboxes.learn.writer import atomic_write

    atomic_write(target, data)
    _remove_others(target, kind)
    return target


def ensure(package_dir: str) -> None:
    """Write each unit there is none of (the command line's process, before a child that arms
    the guard starts); nothing under ``-B``/``PYTHONDONTWRITEBYTECODE`` (a cache, as the
    ``.pyc`` files), or when it cannot be written (a read-only installation: the imports then
    go the usual way). A stale unit is not rebuilt here: that would mean checking every source
    on every start, which its reader does anyway (``python -m pysandboxes.launch.unit``
    rebuilds them)."""

    if sys.dont_write_bytecode:
        return
    try:
        stamp = copy_stamp(package_dir)
    except OSError:
        return
    for kind in UNITS:
        try:
            if not os.path.exists(unit_file(package_dir, kind, stamp)):
                build(package_dir, kind)
        except (OSError, SyntaxError, ValueError):
            pass


def load(package_dir: str, kind: str = "guard") -> "dict[str, tuple[str, bool, Any]] | None":
    """The modules of unit ``kind``, ``{name: (path, is_package, code)}``, when that unit of the
    package in ``package_dir`` exists and still stands for its sources (see the module
    docstring); else ``None``."""

    try:
        with open(unit_file(package_dir, kind), "rb") as unit:
            data = unit.read()
        line = data.index(b"\n")
        start = line + 1
        end = start + int(data[:line])
        head = marshal.loads(data[start:end])
        if type(head) is not tuple or len(head) != 5:
            return None
        index = head[4]
        if head[:4] != (FORMAT, _magic(), sys.flags.optimize, package_dir):
            return None
        if tuple(entry[0] for entry in index) != UNITS[kind]:
            return None
        for name, path, is_package, mtime_ns, size in index:
            # Each module's code is that of its own file in this package, nothing else.
            if path != _expected_source(package_dir, name, is_package):
                return None
            status = os.stat(path)
            if status.st_mtime_ns != mtime_ns or status.st_size != size:
                return None
        codes = marshal.loads(memoryview(data)[end:])
        if type(codes) is not tuple or len(codes) != len(index):
            return None
        code_type = type(_expected_source.__code__)
        for code in codes:
            if type(code) is not code_type:
                return None
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return {entry[0]: (entry[1], entry[2], code) for entry, code in zip(index, codes, strict=True)}


class _Finder:
    """The meta path finder of a unit's modules (:func:`installed`)."""

    def __init__(self, modules: "dict[str, tuple[str, bool, Any]]") -> None:
        from _frozen_importlib_external import (  # type: ignore[import-not-found]
            SourceFileLoader,
            spec_from_file_location,
        )

        class UnitLoader(SourceFileLoader):  # type: ignore[misc]
            """``SourceFileLoader`` whose code comes from the unit, and which hands the module
            a plain ``SourceFileLoader`` of its file before running it: no module keeps this
            class, and a reload reads the file as usual."""

            def exec_module(self, module: "Any") -> None:
                entry = modules.pop(self.name, None)
                if entry is None:
                    super().exec_module(module)
                    return
                plain = SourceFileLoader(self.name, self.path)
                module.__loader__ = plain
                module.__spec__.loader = plain
                exec(entry[2], module.__dict__)

        self._modules = modules
        self._loader = UnitLoader
        self._spec = spec_from_file_location

    def find_spec(self, name: str, path: "Any" = None, target: "Any" = None) -> "Any":
        entry = self._modules.get(name)
        if entry is None:
            return None
        file, is_package = entry[0], entry[1]
        locations = [os.path.dirname(file)] if is_package else None
        return self._spec(
            name, file, loader=self._loader(name, file), submodule_search_locations=locations
        )

    def invalidate_caches(self) -> None:
        pass


class installed:
    """``with installed(package_dir, kind):`` the finder of unit ``kind`` first on
    ``sys.meta_path`` (when the unit is valid), removed on leaving; a module the unit does not
    hold, or any import when there is no valid unit, goes the usual way."""

    def __init__(self, package_dir: str, kind: str = "guard") -> None:
        modules = load(package_dir, kind)
        self._finder = None if modules is None else _Finder(modules)

    def __enter__(self) -> bool:
        if self._finder is not None:
            sys.meta_path.insert(0, self._finder)
        return self._finder is not None

    def __exit__(self, *exc: object) -> None:
        finders = sys.meta_path
        for index in range(len(finders)):  # by identity: no finder's __eq__ is called
            if finders[index] is self._finder:
                del finders[index]
                break
        self._finder = None


#: The package's directory (this file is ``pysandboxes/launch/unit.py``).
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    """``python -m pysandboxes.launch.unit``: (re)write the units of this installation."""

    for kind in UNITS:
        try:
            path = build(PACKAGE_DIR, kind)
        except OSError as exc:
            sys.stderr.write(f"python-sb: the {kind} unit cannot be written: {exc}\n")
            return 1
        sys.stdout.write(f"{path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
