"""Start-up of ``python-sb hello.py`` against ``python3 hello.py`` (issue 3; DESIGN decision 7).

Target: at most 30 ms over plain python3 for ``os-sandbox=subprocess`` (python-sb parses its
rules, then execs a second interpreter; ``none`` runs in its own). The rule file turns the Python
layer on and off so that its cost is visible apart from the launcher's.

Wall-clock medians on a shared machine mostly measure the other load; the CPU-time cases (user +
system of the whole run, python-sb and the interpreter it execs, minus python3's, run after run)
move much less with it. Read both.
"""

from __future__ import annotations

import statistics
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cases import PYTHON3, PYTHON_SB, CommandCase


def setup(workdir: Path) -> None:
    (workdir / ".py-sandboxes").write_text(
        "# start-up benchmark\npy-sandbox=false\nos-sandbox=subprocess\nenv=LANG=${LANG}\n"
    )
    guarded = workdir / "guarded"
    guarded.mkdir()
    (guarded / "hello.py").write_text("print('hello')\n")
    (guarded / ".py-sandboxes").write_text(
        "# start-up benchmark, Python layer on\npy-sandbox=true\nos-sandbox=subprocess\n"
        f"expose-ro={guarded}\n"
    )


def _guard_ready() -> bool:
    """The Python-layer case needs ``pysandboxes.guard.arm`` (built apart from the launcher)."""

    try:
        from pysandboxes.guard import arm  # noqa: F401
    except ImportError:
        return False
    return True


def _cpu_ms(argv: list[str], workdir: Path) -> float:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=workdir, stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def _cpu_over_python3(
    label: str, command: Callable[[Path], list[str]]
) -> Callable[[Path, int], dict[str, Any]]:
    def measure(workdir: Path, runs: int) -> dict[str, Any]:
        baseline = [PYTHON3, str(workdir / "hello.py")]
        _cpu_ms(command(workdir), workdir)  # warm caches
        extra = [
            _cpu_ms(command(workdir), workdir) - _cpu_ms(baseline, workdir) for _ in range(runs)
        ]
        return {
            "name": f"{label}: CPU time over python3 (median)",
            "kind": "value",
            "value": round(statistics.median(extra), 1),
            "unit": "ms",
        }

    return measure


CASES: list[Any] = [
    CommandCase(
        name="python-sb --os-sandbox=subprocess hello.py",
        command=lambda w: [PYTHON_SB, "--os-sandbox=subprocess", str(w / "hello.py")],
        target_ms_over=30,
    ),
    CommandCase(
        name="python-sb --os-sandbox=none hello.py",
        command=lambda w: [PYTHON_SB, "--os-sandbox=none", str(w / "hello.py")],
    ),
]
CASES.append(
    _cpu_over_python3(
        "subprocess, py-sandbox=false",
        lambda w: [PYTHON_SB, "--os-sandbox=subprocess", str(w / "hello.py")],
    )
)
if _guard_ready():
    CASES += [
        CommandCase(
            name="python-sb subprocess hello.py, py-sandbox=true",
            command=lambda w: [PYTHON_SB, str(w / "guarded" / "hello.py")],
        ),
        _cpu_over_python3(
            "subprocess, py-sandbox=true", lambda w: [PYTHON_SB, str(w / "guarded" / "hello.py")]
        ),
    ]
