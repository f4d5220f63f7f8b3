# python-sb's bootstrap (this first line is a comment: the option -x skips it)
"""The child interpreter's first code: ``python [options] boot.py CHILD FD SRC``.

A file rather than ``-c`` code: for ``-c``, CPython puts the current directory (``''``) first in
``sys.path``, and from 3.13 imports ``linecache`` through it before running the code (to show
the ``-c`` source in tracebacks), so a ``linecache.py`` of the program's directory would run
before the guard. For a file, ``sys.path[0]`` is this directory (python-sb's own) and nothing is
imported before this code runs. It loads ``child.py`` by path and hands it the descriptor (or
Windows handle ``hN``) of the run description; ``child.main`` replaces ``sys.argv``,
``sys.path`` and ``__main__``'s namespace before the program runs.
"""


def load_beside(path: str, name: str) -> object:
    """The launcher's file ``name`` (``child``, ``interpreter``, ``unit``) of the directory of
    ``path``, loaded by path as the module ``pysandboxes_NAME``, not entered in
    ``sys.modules``: the one way the bootstrap loads python-sb's code without importing the
    package (``child.py`` loads ``interpreter.py`` and ``unit.py`` through it)."""

    from _frozen_importlib import module_from_spec
    from _frozen_importlib_external import spec_from_file_location

    beside = path[: max(path.rfind("/"), path.rfind("\\")) + 1] + name + ".py"
    spec = spec_from_file_location("pysandboxes_" + name, beside)
    module = module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


if __name__ == "__main__":
    import sys

    load_beside(sys.argv[1], "child").main(sys.argv[2], sys.argv[3])  # type: ignore[attr-defined]
