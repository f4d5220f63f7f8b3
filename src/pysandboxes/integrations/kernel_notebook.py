"""``python-sb --notebook NB.ipynb [--output OUT.ipynb] [--timeout SECONDS] [run options]``.

Executes every code cell of a notebook in the sandboxed kernel (``python-sb --kernel``, through
``nbclient``, as ``jupyter nbconvert --execute`` would), in the notebook's directory, and says
how each cell ended. The run options are those of ``--kernel``: ``--pysandboxes-config=FILE``,
``--learn[=FILE]``, ``--audit``, ``--denials=FILE``, ``--key=value``.

One rule file per origin (docs/kernel.md): ``--learn=FILE`` runs the notebook once in learning
mode and writes the rules it needed to ``FILE``; after review, the same command with
``--pysandboxes-config=FILE`` runs it under them, with the same outputs, and a cell that tries
more than the file grants fails with the rule. Without ``--pysandboxes-config`` the rule file is
``.py-sandboxes`` in the notebook's directory (as for a ``-c`` run there).

Exit status: 0 when every cell ran, 1 when a cell raised (each such cell's error is printed:
a refusal names the rule and the line that would allow it), 2 when nothing ran.
``--output`` writes the executed notebook (its outputs, errors included). Needs ``nbclient``,
``nbformat`` and ``jupyter_client``: ``pip install pysandboxes[kernel]``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from typing import Any

from pysandboxes.integrations.kernel_install import python_sb_command
from pysandboxes.launch.argv import PROG

__all__ = ["cell_errors", "main", "run_notebook"]

_USAGE = (
    f"usage: {PROG} --notebook NB.ipynb [--output OUT.ipynb] [--timeout SECONDS] "
    "[--pysandboxes-config=FILE] [--learn[=FILE] | --audit] [--denials=FILE] [--key=value ...]"
)
_KERNEL_NAME = "python-sb-notebook"


class _Usage(Exception):
    pass


def _options(words: list[str]) -> tuple[str, str | None, float, list[str]]:
    if not words or words[0].startswith("-"):
        raise _Usage("--notebook needs the notebook file")
    from pysandboxes.launch.argv import split_running

    # The one reading of a --notebook command line (the coding-agent hook uses it too).
    own, runs = split_running(["--notebook", *words])
    notebook, output, timeout = own[0], None, 600.0
    i = 1
    while i < len(own):
        option, eq, value = own[i].partition("=")
        if not eq:
            if i + 1 >= len(own):
                raise _Usage(f"{option} needs a value")
            i += 1
            value = own[i]
        if option == "--output":
            output = value
        else:
            try:
                timeout = float(value)
            except ValueError:
                raise _Usage(f"--timeout {value!r} is not a number of seconds") from None
        i += 1
    passed: list[str] = []
    i = 0
    while i < len(runs):
        word = runs[i]
        option, eq, value = word.partition("=")
        if option in ("--pysandboxes-config", "--denials") and not eq:
            if i + 1 >= len(runs):
                raise _Usage(f"{option} needs a value")
            i += 1
            value = runs[i]
        if option in ("--pysandboxes-config", "--denials", "--learn") and value:
            # Files named on the command line are the caller's: absolute, since the kernel runs
            # in the notebook's directory.
            passed.append(f"{option}={os.path.abspath(os.path.expanduser(value))}")
        elif word.startswith("--") and option not in ("--kernel", "--explain", "--json"):
            passed.append(word)
        else:
            raise _Usage(f"unexpected {word!r}")
        i += 1
    return notebook, output, timeout, passed


def run_notebook(path: str, options: list[str], timeout: float) -> Any:
    """Execute the notebook at ``path`` in the sandboxed kernel with the run ``options``; the
    executed notebook (an ``nbformat`` node)."""

    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    folder = os.path.dirname(os.path.abspath(path))
    with tempfile.TemporaryDirectory(prefix="pysb-notebook-") as specs:
        spec_dir = os.path.join(specs, _KERNEL_NAME)
        os.mkdir(spec_dir)
        argv = [*python_sb_command(), "--kernel={connection_file}", *options]
        spec = {"argv": argv, "display_name": PROG, "language": "python"}
        spec["interrupt_mode"] = "signal"
        with open(os.path.join(spec_dir, "kernel.json"), "w", encoding="utf-8") as handle:
            json.dump(spec, handle)
        manager = KernelManager(
            kernel_name=_KERNEL_NAME, kernel_spec_manager=KernelSpecManager(kernel_dirs=[specs])
        )
        # Learning writes its rules when the kernel ends: give it time before a kill.
        manager.shutdown_wait_time = 60.0
        client = NotebookClient(
            notebook,
            km=manager,
            timeout=int(timeout),
            allow_errors=True,
            resources={"metadata": {"path": folder}},
        )
        client.execute(cleanup_kc=True)  # shut the kernel down (learning writes then)
    return notebook


def cell_errors(notebook: Any) -> list[tuple[int, str, str]]:
    """``(cell number, exception name, message)`` of every code cell that raised."""

    found: list[tuple[int, str, str]] = []
    number = 0
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        number += 1
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                found.append((number, output.get("ename", ""), output.get("evalue", "")))
    return found


def main(words: list[str]) -> int:
    """``python-sb --notebook ...``; the exit status (see the module docstring)."""

    try:
        path, output, timeout, options = _options(words)
        if not os.path.isfile(path):
            raise _Usage(f"no notebook file {path}")
        try:
            import nbclient  # noqa: F401
        except ImportError:
            raise _Usage("nbclient is not installed: pip install 'pysandboxes[kernel]'") from None
    except _Usage as exc:
        sys.stderr.write(f"{PROG}: {exc}\n{_USAGE}\n")
        return 2
    try:
        notebook = run_notebook(path, options, timeout)
    except Exception as exc:  # the kernel did not start, a cell timed out, a broken notebook
        sys.stderr.write(f"{PROG}: --notebook {path}: {type(exc).__name__}: {exc}\n")
        return 2
    if output:
        import nbformat

        nbformat.write(notebook, output)  # type: ignore[no-untyped-call]
    errors = cell_errors(notebook)
    cells = sum(1 for cell in notebook.cells if cell.cell_type == "code")
    for number, name, message in errors:
        sys.stdout.write(f"cell {number}: {name}: {message}\n")
    sys.stdout.write(f"{PROG}: {path}: {cells - len(errors)} of {cells} code cells ran\n")
    return 1 if errors else 0
