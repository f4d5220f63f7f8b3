"""Which rule file a run uses (SPEC §2.7).

1. ``--pysandboxes-config=FILE`` (the API's ``sandboxes_config=``), relative to the cwd.
2. A script: ``.py-sandboxes`` in the script's own directory (the directory of its real path,
   as CPython's ``sys.path[0]``), whatever the current directory.
3. ``-m pkg.mod``: ``.py-sandboxes`` in the module's package directory, then in each enclosing
   package up to the top-level one (so a wheel can ship its rules). The package is found with
   ``importlib.machinery.PathFinder`` one level at a time over ``[cwd] + sys.path[1:]`` (the
   path ``-m`` gives the program): nothing is imported, no ``__init__.py`` runs.
4. ``./.py-sandboxes`` in the current directory: for ``-c``, stdin and the REPL, and as the
   fallback of 2 and 3 when their file does not exist.

The result may not exist (learning mode then writes it): when neither the script's (or
package's) file nor the cwd's exists, the cwd's path is returned, since a bare ``--learn``
writes into the current directory.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # as typing.TYPE_CHECKING: typing costs start-up time (DESIGN 7)
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["RULE_FILE_NAME", "find_rule_file", "module_directories", "module_not_found"]

RULE_FILE_NAME = ".py-sandboxes"
PROGRAM_KINDS = ("script", "module", "code", "stdin", "repl")


def find_rule_file(
    explicit: str | None,
    program_kind: str,
    target: str | None,
    cwd: str,
    *,
    search_path: Sequence[str] | None = None,
) -> str:
    """The absolute path of the rule file to use (it may not exist).

    ``program_kind`` is ``script`` (``target`` = the path as given), ``module`` (``target`` =
    the dotted name), ``code``, ``stdin`` or ``repl``. ``search_path`` replaces the module
    search path (default ``[cwd] + sys.path[1:]``).
    """

    if program_kind not in PROGRAM_KINDS:
        raise ValueError(f"unknown program kind {program_kind!r}")
    if explicit is not None:
        return os.path.normpath(os.path.join(cwd, os.path.expanduser(explicit)))
    fallback = os.path.join(cwd, RULE_FILE_NAME)
    candidates: list[str] = []
    if program_kind == "script" and target:
        candidates.append(os.path.join(_script_directory(target, cwd), RULE_FILE_NAME))
    elif program_kind == "module" and target:
        path = [cwd, *sys.path[1:]] if search_path is None else list(search_path)
        candidates.extend(os.path.join(d, RULE_FILE_NAME) for d in module_directories(target, path))
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    return fallback


def _script_directory(target: str, cwd: str) -> str:
    path = os.path.join(cwd, target)
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        real = os.path.normpath(path)
    if os.path.isdir(real):  # python-sb DIR runs DIR/__main__.py
        return real
    return os.path.dirname(real)


def module_directories(dotted: str, search_path: Sequence[str]) -> list[str]:
    """Directories to look in for ``-m dotted``, innermost first, without importing anything.

    For a package: its directory, then each enclosing package's. For a plain module inside a
    package: its package's directory and outwards. A top-level plain module gives the
    directory that holds it. An unknown module gives ``[]``.
    """

    from importlib.machinery import PathFinder

    names = dotted.split(".")
    if not all(name.isidentifier() for name in names):
        return []
    found: list[str] = []
    locations: list[str] = list(search_path)
    for depth, name in enumerate(names):
        try:
            spec = PathFinder.find_spec(name, locations)
        except (ImportError, OSError, ValueError):
            return found[::-1]
        if spec is None:
            return found[::-1]
        search = list(spec.submodule_search_locations or [])
        if search:  # a package (regular or namespace)
            found.append(os.path.realpath(search[0]))
            locations = search
            continue
        if depth == len(names) - 1 and spec.origin and os.path.isabs(spec.origin):
            if depth == 0:
                found.append(os.path.dirname(os.path.realpath(spec.origin)))
            return found[::-1]
        return found[::-1]  # a plain module cannot hold submodules
    return found[::-1]


def module_not_found(dotted: str, search_path: Sequence[str]) -> bool:
    """Whether ``-m dotted`` certainly names no module, found without importing anything.

    True only when a level of the name is found nowhere: not built in, not frozen and not on
    ``search_path`` (the top level), or not in its package's directories (a lower level, the
    package found as :func:`module_directories` finds it). A name some other finder might
    serve (a zip import, a package that is not a plain directory) counts as found: the
    interpreter decides then. Learning and audit use it so that a run that would run nothing
    learns nothing (issue 26)."""

    from importlib.machinery import BuiltinImporter, FrozenImporter, PathFinder

    names = dotted.split(".")
    if not all(name.isidentifier() for name in names):
        return False
    try:
        if BuiltinImporter.find_spec(names[0]) or FrozenImporter.find_spec(names[0]):
            return False
    except (ImportError, ValueError):
        return False
    locations: list[str] = list(search_path)
    for name in names:
        try:
            spec = PathFinder.find_spec(name, locations)
        except (ImportError, OSError, ValueError):
            return False
        if spec is None:
            return True
        search = list(spec.submodule_search_locations or [])
        if not search:
            return name != names[-1]  # a plain module holds no submodule
        locations = search
    return False
