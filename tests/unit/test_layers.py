"""The imports of ``pysandboxes`` run one way (issue 24 item 2; docs/architecture.md, Layers).

Every import of every module is read with ``ast`` -- at module level, inside functions, under
``TYPE_CHECKING``, and ``__import__``/``importlib.import_module`` of a constant name -- and
reduced to an edge between packages (the first name below ``pysandboxes``: ``guard``,
``launch``...; a top-level module such as ``errors`` is a package of its own, the package's
``__init__`` is ``<root>``). The house is, top to bottom:

0. ``tools``, ``integrations`` (they stand apart: neither imports the other), ``<root>`` (the
   public API, ``pysandboxes/__init__.py``) and ``__main__``;
1. ``partial``, ``evalguard``;
2. ``launch``;
3. ``learn``, ``providers``, ``guard``;
4. ``policy``;
5. ``errors``, ``platform_caps``, ``runtime``, ``record``.

An edge may go down, or sideways inside a layer; never up, and the package graph has no cycle.
A higher layer reaches a lower one's code by an extension point the higher one hands down, or
by a table of module names the lower one loads late (``launch/cli.TOOLS`` and ``EXPLAIN``: the
sub-commands; ``launch/child.EXTENSIONS``: what the child serves and the guard's eval
extension): those names are not imports, and :func:`test_late_bound_names_point_up` checks
each.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import pysandboxes

PACKAGE_DIR = Path(pysandboxes.__file__).resolve().parent

LAYERS: tuple[tuple[str, ...], ...] = (
    ("tools", "integrations", "<root>", "__main__"),
    ("partial", "evalguard"),
    ("launch",),
    ("learn", "providers", "guard"),
    ("policy",),
    ("errors", "platform_caps", "runtime", "record"),
)
#: Packages of the top layer that must not import each other.
APART = ("tools", "integrations")


class Edge:
    """One import: from module ``source`` (file, line) to module ``target``."""

    def __init__(self, source: str, line: int, target: str) -> None:
        self.source = source
        self.line = line
        self.target = target

    def __repr__(self) -> str:
        return f"{self.source}:{self.line} -> {self.target}"


def _module_name(root: Path, path: Path, package: str) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([package, *parts])


def _resolve_from(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _constant_import(node: ast.Call) -> str | None:
    """The module a ``__import__("x")`` or ``importlib.import_module("x")`` call names."""

    func = node.func
    named = (isinstance(func, ast.Name) and func.id == "__import__") or (
        isinstance(func, ast.Attribute) and func.attr == "import_module"
    )
    if named and node.args and isinstance(node.args[0], ast.Constant):
        value = node.args[0].value
        return value if isinstance(value, str) else None
    return None


def imports_of(root: Path, package: str) -> Iterator[Edge]:
    """Every import inside ``root`` (the directory of package ``package``) of a module of
    that package."""

    modules = {_module_name(root, path, package) for path in root.rglob("*.py")}
    for path in sorted(root.rglob("*.py")):
        module = _module_name(root, path, package)
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve_from(module, is_package, node)
                # ``from pysandboxes import errors`` imports the module pysandboxes.errors.
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            elif isinstance(node, ast.Call):
                named = _constant_import(node)
                targets = [named] if named else []
            for target in targets:
                if target == package or target.startswith(package + "."):
                    yield Edge(module, node.lineno, target)


def package_of(module: str, package: str) -> str:
    parts = module.split(".")
    if parts[0] != package:
        raise ValueError(module)
    return parts[1] if len(parts) > 1 else "<root>"


def violations(
    root: Path,
    package: str,
    layers: Sequence[Sequence[str]] = LAYERS,
    apart: Sequence[str] = APART,
) -> list[str]:
    """What breaks the rule (see the module docstring), one sentence each."""

    layer_of = {name: index for index, names in enumerate(layers) for name in names}
    found: list[str] = []
    graph: dict[str, set[str]] = {}
    for edge in imports_of(root, package):
        source = package_of(edge.source, package)
        target = package_of(edge.target, package)
        if source == target:
            continue
        for name in (source, target):
            if name not in layer_of:
                found.append(f"{edge}: package {name!r} is in no layer")
        if source not in layer_of or target not in layer_of:
            continue
        if layer_of[target] < layer_of[source]:
            found.append(f"{edge}: {source} (layer {layer_of[source]}) imports {target}, above it")
        elif source in apart and target in apart:
            found.append(f"{edge}: {source} and {target} stand apart")
        graph.setdefault(source, set()).add(target)
    found.extend(f"a cycle between packages: {' -> '.join(cycle)}" for cycle in _cycles(graph))
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each package that is on one (depth-first search)."""

    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def test_the_package_imports_run_one_way() -> None:
    assert violations(PACKAGE_DIR, "pysandboxes") == []


def test_every_package_is_in_a_layer() -> None:
    names = {path.name for path in PACKAGE_DIR.iterdir() if (path / "__init__.py").exists()}
    names |= {path.stem for path in PACKAGE_DIR.glob("*.py") if path.stem != "__init__"}
    placed = {name for layer in LAYERS for name in layer}
    assert names - placed == set()


def _late_bound() -> list[tuple[str, str, str]]:
    """(table, key, module name) of the late-bound tables named in the module docstring."""

    from pysandboxes.launch import child, cli

    found = [(f"launch/child.EXTENSIONS[{k!r}]", k, v) for k, v in child.EXTENSIONS.items()]
    found.append(("launch/cli.EXPLAIN", "--explain", cli.EXPLAIN))
    for option, name in cli.TOOLS.items():
        module = name if "." in name else f"pysandboxes.tools.{name}"
        found.append((f"launch/cli.TOOLS[{option!r}]", option, module))
    return found


@pytest.mark.parametrize(("table", "key", "module"), _late_bound())
def test_late_bound_names_point_up(table: str, key: str, module: str) -> None:
    """A name loaded late by ``launch`` is a module of a layer above it (otherwise it would be
    an import, and belongs in one). A sub-command not built in this version (``--check``) has
    no module: ``cli.run_tool`` says so."""

    layer_of = {name: index for index, names in enumerate(LAYERS) for name in names}
    assert layer_of[package_of(module, "pysandboxes")] < layer_of["launch"], (table, module)
    if not table.startswith("launch/cli.TOOLS"):
        assert importlib.util.find_spec(module) is not None, f"{table} = {module}"


def test_the_sub_commands_are_the_parsers_own() -> None:
    """``argv.SUBCOMMANDS`` (what a reader of a command line is told runs no program) and
    ``cli.TOOLS`` (what python-sb runs for each) name the same verbs."""

    from pysandboxes.launch import argv, cli

    assert set(argv.SUBCOMMANDS) == set(cli.TOOLS)


# -- the test of the test --------------------------------------------------------------------------


def _synthetic(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "house"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


SYNTHETIC_LAYERS = (("top",), ("middle",), ("base",))
SYNTHETIC = {
    "top/__init__.py": "",
    "top/a.py": "from house.middle import b\n",
    "middle/__init__.py": "",
    "middle/b.py": "from house import base\n",
    "base.py": "import os\n",
}


def test_the_synthetic_house_is_clean(tmp_path: Path) -> None:
    root = _synthetic(tmp_path, SYNTHETIC)
    assert violations(root, "house", SYNTHETIC_LAYERS, ()) == []


@pytest.mark.parametrize(
    "back_edge",
    [
        "from house.top import a\n",  # module level
        "def f():\n    from ..top import a\n",  # inside a function, relative
        "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    import house.top.a\n",
        "def f():\n    return __import__('house.top.a')\n",
    ],
    ids=["module-level", "in-function-relative", "type-checking", "dunder-import"],
)
def test_a_back_edge_fails(tmp_path: Path, back_edge: str) -> None:
    root = _synthetic(tmp_path, {**SYNTHETIC, "middle/c.py": back_edge})
    found = violations(root, "house", SYNTHETIC_LAYERS, ())
    assert any("middle (layer 1) imports top, above it" in item for item in found), found
    assert any("a cycle between packages: middle -> top -> middle" in i for i in found), found


def test_a_cycle_inside_a_layer_fails(tmp_path: Path) -> None:
    files = {
        **SYNTHETIC,
        "left/__init__.py": "from house import right\n",
        "right/__init__.py": "import house.left\n",
    }
    root = _synthetic(tmp_path, files)
    found = violations(root, "house", (("top",), ("middle", "left", "right"), ("base",)), ())
    assert found == ["a cycle between packages: left -> right -> left"]


def test_packages_that_stand_apart(tmp_path: Path) -> None:
    files = {**SYNTHETIC, "other/__init__.py": "", "other/x.py": "from house.top import a\n"}
    root = _synthetic(tmp_path, files)
    layers = (("top", "other"), ("middle",), ("base",))
    assert violations(root, "house", layers, ()) == []
    found = violations(root, "house", layers, ("top", "other"))
    assert any("other and top stand apart" in item for item in found), found


def test_a_package_in_no_layer_fails(tmp_path: Path) -> None:
    root = _synthetic(tmp_path, {**SYNTHETIC, "stray.py": "from house import base\n"})
    found = violations(root, "house", SYNTHETIC_LAYERS, ())
    assert any("package 'stray' is in no layer" in item for item in found), found


if __name__ == "__main__":  # a listing of the current violations, for whoever fixes them
    print("\n".join(violations(PACKAGE_DIR, "pysandboxes")) or "none", file=sys.stderr)
