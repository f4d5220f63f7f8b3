"""Start-up of ``os-sandbox=bwrap`` and ``os-sandbox=unshare``, with and without ``net=`` rules,
next to ``os-sandbox=subprocess`` and plain python3.

- Without ``net=`` rules (loopback only, nothing started): bubblewrap builds the mount tree, or
  the unshare setup step (one bare interpreter) does. Target (issue 7): <= 25 ms over
  ``subprocess``.
- With a ``net=`` rule: the holder namespace with its nftables ruleset and pasta are started
  first and python-sb stays as the supervising parent. Target: <= 150 ms over ``subprocess``.

The Python layer is off (``--py-sandbox=false``) so the guard's own cost does not hide the
provider's.
"""

from __future__ import annotations

import statistics
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cases import PYTHON3, PYTHON_SB, CommandCase

NET_RULE = "--net=ALLOW|TCP|127.0.0.1|5432|OUT"


def setup(workdir: Path) -> None:
    (workdir / ".py-sandboxes").write_text(f"expose-ro={workdir}\n")


def _command(provider: str, *extra: str) -> Callable[[Path], list[str]]:
    return lambda w: [
        PYTHON_SB,
        "--py-sandbox=false",
        f"--os-sandbox={provider}",
        *extra,
        str(w / "hello.py"),
    ]


SUBPROCESS = _command("subprocess")

#: The provider's own work inside python-sb, in a fresh interpreter that has loaded what the
#: launcher loads: import, availability, prepare (mount plan; with a net= rule also the holder,
#: nftables and pasta, stopped again afterwards). Less sensitive to a loaded machine than whole
#: commands. (The unshare namespaces and mounts are made later, in pre_exec: not counted here.)
_IN_PROCESS = textwrap.dedent(
    """
    import sys, time
    import pysandboxes.launch.cli
    from pysandboxes.policy import load_policy
    from pysandboxes.providers.base import Launch
    from pysandboxes.runtime import RunContext
    workdir = sys.argv[2]
    rules = [("py-sandbox", "false")] + ([("net", sys.argv[3])] if len(sys.argv) > 3 else [])
    policy = load_policy(workdir + "/.py-sandboxes", cli_rules=rules)
    context = RunContext(tmpdir=workdir, prefixes=(sys.prefix, sys.base_prefix),
                         python=sys.executable)
    launch = Launch(policy=policy, context=context, child_argv=(sys.executable, "-c", "pass"),
                    env={}, cwd=workdir)
    start = time.perf_counter()
    from pysandboxes.providers import get_provider
    provider = get_provider(sys.argv[1])
    provider.availability()
    prepared = provider.prepare(launch)
    print((time.perf_counter() - start) * 1000)
    for step in prepared.cleanup:
        step()
    """
)


def _in_process(provider: str, *net: str) -> Callable[[Path, int], dict[str, Any]]:
    def measure(workdir: Path, runs: int) -> dict[str, Any]:
        times = []
        for _ in range(runs):
            out = subprocess.run(
                [PYTHON3, "-c", _IN_PROCESS, provider, str(workdir), *net],
                capture_output=True,
                text=True,
                check=True,
            )
            times.append(float(out.stdout.split()[-1]))
        label = " with a net= rule" if net else ""
        return {
            "name": f"{provider}: provider work inside python-sb{label} (median)",
            "kind": "value",
            "value": round(statistics.median(times), 2),
            "unit": "ms",
        }

    return measure


def _cpu_time(label: str, command: Callable[[Path], list[str]]) -> Callable[..., dict[str, Any]]:
    """CPU time (user + system) of a whole run and of the processes it waited for, over
    ``subprocess``'s: on a loaded machine wall-clock medians mostly measure the other load,
    CPU time much less. (pasta's daemon is not a waited-for child: not counted.)"""

    def cpu(argv: list[str], workdir: Path) -> float:
        import resource

        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(argv, cwd=workdir, stdout=subprocess.DEVNULL, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        return used * 1000

    def measure(workdir: Path, runs: int) -> dict[str, Any]:
        extra = [
            cpu(command(workdir), workdir) - cpu(SUBPROCESS(workdir), workdir) for _ in range(runs)
        ]
        return {
            "name": f"{label}: CPU time over subprocess (median)",
            "kind": "value",
            "value": round(statistics.median(extra), 1),
            "unit": "ms",
        }

    return measure


CASES: list[Any] = [
    _cpu_time("bwrap", _command("bwrap")),
    _cpu_time("unshare", _command("unshare")),
    _cpu_time("bwrap + net= rule", _command("bwrap", NET_RULE)),
    _cpu_time("unshare + net= rule", _command("unshare", NET_RULE)),
    _in_process("bwrap"),
    _in_process("unshare"),
    _in_process("bwrap", NET_RULE.split("=", 1)[1]),
    CommandCase("subprocess vs python3", SUBPROCESS),
    CommandCase("bwrap vs python3", _command("bwrap")),
    CommandCase("unshare vs python3", _command("unshare")),
    CommandCase(
        "bwrap vs subprocess (no net= rule)", _command("bwrap"), SUBPROCESS, target_ms_over=25
    ),
    CommandCase(
        "unshare vs subprocess (no net= rule)", _command("unshare"), SUBPROCESS, target_ms_over=25
    ),
    CommandCase(
        "bwrap vs subprocess (net= rule: pasta + nftables)",
        _command("bwrap", NET_RULE),
        SUBPROCESS,
        target_ms_over=150,
    ),
    CommandCase(
        "unshare vs subprocess (net= rule: pasta + nftables)",
        _command("unshare", NET_RULE),
        SUBPROCESS,
        target_ms_over=150,
    ),
]
