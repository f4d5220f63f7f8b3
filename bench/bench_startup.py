"""Start-up of ``python-sb hello.py`` against ``python3 hello.py`` (issue 3; DESIGN decision 7).

Target: at most 30 ms over plain python3 for ``os-sandbox=subprocess`` (python-sb parses its
rules, then execs a second interpreter; ``none`` runs in its own). The rule file turns the Python
layer on and off so that its cost is visible apart from the launcher's.

Issue 29's row (``startup_table``, the one case ``bench/run.py table`` runs here): hello.py with
the Python layer on under every provider, all sides run in turn, medians; CPU time over
python3 for ``none``, ``subprocess`` and ``landlock`` (goal <= +20 ms), wall time for ``bwrap``
and ``unshare`` (goal <= +40 ms), and the steps of python-sb's own start (its package's import
alone; ``subprocess`` with the Python layer off). With ``BENCH_REFERENCE_PYTHON`` naming the
interpreter of a venv holding the reference implementation (``pysandboxes==0.7.0``), its own
``python-sb`` runs the same script and rule file (goal: ours >= 10x faster).

Wall-clock medians on a shared machine mostly measure the other load; the CPU-time cases (user +
system of the whole run, python-sb and the interpreter it execs, minus python3's, run after run)
move much less with it. Read both.
"""

from __future__ import annotations

import os
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


# -- issue 29's start-up row: every provider, the Python layer on, and the steps -----------------

#: The issue's goals: CPU time over python3 for the providers without a namespace, wall time
#: over python3 for the namespace providers (their processes are reaped inside the namespace).
CPU_GOAL_MS = 20.0
WALL_GOAL_MS = 40.0
CPU_PROVIDERS = ("none", "subprocess", "landlock")
WALL_PROVIDERS = ("bwrap", "unshare")


def _timed_run(argv: list[str], workdir: Path) -> tuple[float, float]:
    """(wall ms, CPU ms of the run and the processes it waited for)."""

    import resource
    import time

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # stderr too: the py-sandbox=false step says at every start what it does not enforce.
    subprocess.run(
        argv, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def _steps(workdir: Path) -> dict[str, list[str]]:
    """The commands of the start-up row, python3 first; ``guarded/`` holds the rule file that
    turns the Python layer on (``setup``), the provider comes from the command line."""

    hello = str(workdir / "guarded" / "hello.py")
    sides = {"python3": [PYTHON3, hello]}
    # The steps of python-sb's own start: its package's imports alone (what the console script
    # loads before it reads a rule), then subprocess without and with the Python layer.
    sides["step: import pysandboxes.launch.cli"] = [PYTHON3, "-c", "import pysandboxes.launch.cli"]
    sides["step: subprocess, py-sandbox=false"] = [
        PYTHON_SB,
        "--os-sandbox=subprocess",
        "--py-sandbox=false",
        hello,
    ]
    for provider in (*CPU_PROVIDERS, *WALL_PROVIDERS):
        sides[provider] = [PYTHON_SB, f"--os-sandbox={provider}", hello]
    reference = os.environ.get("BENCH_REFERENCE_PYTHON")
    if reference:  # pysandboxes 0.7.0 in a venv of its own (its import name is ours)
        # Its own python-sb, on the same script and rule file (it reads the same keys).
        sides["reference 0.7.0"] = [str(Path(reference).with_name("python-sb")), hello]
    return sides


def startup_table(workdir: Path, runs: int) -> dict[str, Any]:
    """Issue 29's start-up row: every side run in turn, ``runs`` rounds, medians."""

    sides = _steps(workdir)
    available = {}
    for name, argv in sides.items():  # warm caches; a provider that cannot start is left out
        try:
            _timed_run(argv, workdir)
        except subprocess.CalledProcessError:
            continue
        available[name] = argv
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in available}
    for _ in range(runs):
        for name, argv in available.items():
            samples[name].append(_timed_run(argv, workdir))
    wall = {n: statistics.median(s[0] for s in xs) for n, xs in samples.items()}
    cpu = {n: statistics.median(s[1] for s in xs) for n, xs in samples.items()}
    base_wall, base_cpu = wall["python3"], cpu["python3"]
    parts = [f"python3 {base_cpu:.0f} ms CPU / {base_wall:.0f} ms wall"]
    met = True
    for provider in CPU_PROVIDERS:
        if provider in cpu:
            over = cpu[provider] - base_cpu
            met = met and over <= CPU_GOAL_MS
            parts.append(f"{provider} +{over:.0f} ms CPU")
        else:
            met = False
            parts.append(f"{provider} unavailable")
    for provider in WALL_PROVIDERS:
        if provider in wall:
            over = wall[provider] - base_wall
            met = met and over <= WALL_GOAL_MS
            parts.append(f"{provider} +{over:.0f} ms wall (CPU +{cpu[provider] - base_cpu:.0f})")
        else:
            met = False
            parts.append(f"{provider} unavailable")
    steps = "; steps (CPU over python3): " + ", ".join(
        f"{name[6:]} +{cpu[name] - base_cpu:.0f} ms" for name in samples if name.startswith("step:")
    )
    figure = ", ".join(parts) + steps
    goal = f"<= +{CPU_GOAL_MS:g} ms CPU (none/subprocess/landlock), <= +{WALL_GOAL_MS:g} ms wall"
    rows: dict[str, tuple[str, str, bool]] = {"startup": (figure, goal, met)}
    if "reference 0.7.0" in wall and "subprocess" in wall:
        times = wall["reference 0.7.0"] / wall["subprocess"]
        rows["reference"] = (
            f"reference 0.7.0 {wall['reference 0.7.0']:.0f} ms wall, x{times:.1f} ours "
            f"(subprocess, {wall['subprocess']:.0f} ms)",
            ">= x10",
            times >= 10,
        )
    return {
        "name": "start-up of hello.py, Python layer on, every provider",
        "kind": "value",
        "value": f"{figure}  goal {goal}: {'ok' if met else 'MISSED'}",
        "unit": "",
        "issue29": rows,
        "wall_ms": {n: round(v, 1) for n, v in wall.items()},
        "cpu_ms": {n: round(v, 1) for n, v in cpu.items()},
        "runs": runs,
    }


CASES.append(startup_table)
TABLE_CASES: list[Any] = [startup_table]
