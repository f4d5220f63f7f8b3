"""Start-up of ``os-sandbox=landlock`` next to ``os-sandbox=subprocess`` and plain python3.

Landlock is applied by python-sb to itself before it execs the interpreter, so its cost over
``subprocess`` is the provider module, one ruleset (a rule per granted path), ``no_new_privs``
and the seccomp filter. Target (issue 6): within 5 ms of ``subprocess``.

The Python layer is measured both on (the default) and off, so a slow guard does not hide the
provider's own cost.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cases import PYTHON_SB, CommandCase


def setup(workdir: Path) -> None:
    (workdir / ".py-sandboxes").write_text(f"expose-ro={workdir}\n")


def _sb(provider: str, python_layer: bool) -> list[str]:
    flag = [] if python_layer else ["--py-sandbox=false"]
    return [PYTHON_SB, *flag, f"--os-sandbox={provider}"]


def _command(provider: str, python_layer: bool) -> Callable[[Path], list[str]]:
    return lambda w: [*_sb(provider, python_layer), str(w / "hello.py")]


CASES = [
    CommandCase("landlock vs python3 (py-sandbox=false)", _command("landlock", False)),
    CommandCase("subprocess vs python3 (py-sandbox=false)", _command("subprocess", False)),
    CommandCase(
        "landlock vs subprocess (py-sandbox=false)",
        _command("landlock", False),
        baseline=_command("subprocess", False),
        target_ms_over=5,
    ),
    CommandCase(
        "landlock vs subprocess (py-sandbox=true)",
        _command("landlock", True),
        baseline=_command("subprocess", True),
        target_ms_over=5,
    ),
]
