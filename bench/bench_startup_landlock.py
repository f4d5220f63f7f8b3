"""Start-up of ``os-sandbox=landlock`` next to ``os-sandbox=subprocess`` and plain python3.

Landlock is applied by python-sb to itself before it execs the interpreter, so its cost over
``subprocess`` is the provider module, one ruleset (a rule per granted path), ``no_new_privs``
and the seccomp filter. Target (issue 6): within 5 ms of ``subprocess``.

The Python layer is measured both on (the default) and off, so a slow guard does not hide the
provider's own cost.
"""

from __future__ import annotations

import statistics
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cases import PYTHON3, PYTHON_SB, CommandCase


def setup(workdir: Path) -> None:
    (workdir / ".py-sandboxes").write_text(f"expose-ro={workdir}\n")


def _sb(provider: str, python_layer: bool) -> list[str]:
    flag = [] if python_layer else ["--py-sandbox=false"]
    return [PYTHON_SB, *flag, f"--os-sandbox={provider}"]


def _command(provider: str, python_layer: bool) -> Callable[[Path], list[str]]:
    return lambda w: [*_sb(provider, python_layer), str(w / "hello.py")]


#: Times, in a fresh interpreter that has already loaded what the launcher loads, the provider's
#: own work: import, availability probe, prepare (the plan) and pre_exec (the restriction).
_IN_PROCESS = textwrap.dedent(
    """
    import sys, time
    import pysandboxes.launch.cli
    from pysandboxes.policy import load_policy
    from pysandboxes.providers.base import Launch
    from pysandboxes.runtime import RunContext
    workdir = sys.argv[2]
    policy = load_policy(workdir + "/.py-sandboxes", cli_rules=[("py-sandbox", "false")])
    context = RunContext(tmpdir=workdir, prefixes=(sys.prefix, sys.base_prefix),
                         python=sys.executable)
    launch = Launch(policy=policy, context=context, child_argv=(sys.executable, "-c", "pass"),
                    env={})
    start = time.perf_counter()
    from pysandboxes.providers import get_provider
    provider = get_provider(sys.argv[1])
    provider.availability()
    prepared = provider.prepare(launch)
    for step in prepared.pre_exec:
        step()
    print((time.perf_counter() - start) * 1000)
    """
)


def _in_process(provider: str) -> Callable[[Path, int], dict[str, Any]]:
    def measure(workdir: Path, runs: int) -> dict[str, Any]:
        times = []
        for _ in range(runs):
            out = subprocess.run(
                [PYTHON3, "-c", _IN_PROCESS, provider, str(workdir)],
                capture_output=True,
                text=True,
                check=True,
            )
            times.append(float(out.stdout.split()[-1]))
        return {
            "name": f"{provider}: provider work inside python-sb (median)",
            "kind": "value",
            "value": round(statistics.median(times), 2),
            "unit": "ms",
        }

    return measure


CASES: list[Any] = [
    _in_process("landlock"),
    _in_process("subprocess"),
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
