"""The sandboxed Jupyter kernel against plain ipykernel, in one run (issue 30's targets).

Both kernels are started by ``jupyter_client.KernelManager`` from kernelspecs in a private
Jupyter directory: ``python-sb --kernel={connection_file}`` under a rule file with
``os-sandbox=landlock`` and the Python layer on, and ``python -m ipykernel_launcher``. Measured,
alternating the two so that drift hits both alike:

- kernel start to the first ``execute_reply`` (start, ``kernel_info``, one trivial cell);
  target within x1.3;
- a trivial cell's round trip (``1``), median of many, in a started kernel; target x1.2;
- a plotting cell (a matplotlib figure shown as PNG ``display_data``; matplotlib imported by an
  earlier cell), median of several; target x1.2.

Needs the ``[kernel]`` extra. ``python bench/run.py kernel``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cases import PYTHON_SB

RULES = "os-sandbox=landlock\npy-sandbox=true\npython-import=matplotlib\n"
PLOT = (
    "fig, ax = plt.subplots()\nax.plot(range(100), [i * i for i in range(100)])\n"
    "ax.set_title('squares')\nplt.show()"
)


def _specs(root: Path) -> dict[str, list[str]]:
    rules = root / "bench.py-sandboxes"
    rules.write_text(RULES)
    return {
        "sandboxed": [PYTHON_SB, "--kernel={connection_file}", f"--pysandboxes-config={rules}"],
        "plain": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
    }


def _install(root: Path) -> Any:
    from jupyter_client.kernelspec import KernelSpecManager

    for name, argv in _specs(root).items():
        folder = root / "kernels" / name
        folder.mkdir(parents=True)
        spec = {"argv": argv, "display_name": name, "language": "python"}
        spec["interrupt_mode"] = "signal"
        (folder / "kernel.json").write_text(json.dumps(spec))
    return KernelSpecManager(kernel_dirs=[str(root / "kernels")])


def _start(specs: Any, name: str, cwd: Path) -> tuple[Any, Any, float]:
    from jupyter_client.manager import KernelManager

    manager = KernelManager(kernel_name=name, kernel_spec_manager=specs)
    begin = time.perf_counter()
    manager.start_kernel(cwd=str(cwd), env=dict(os.environ))
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=120)
    _cell(client, "1")
    return manager, client, (time.perf_counter() - begin) * 1000


def _cell(client: Any, code: str) -> float:
    begin = time.perf_counter()
    reply = client.execute_interactive(code, timeout=120, output_hook=lambda _m: None)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"bench cell failed: {reply['content']}")
    return (time.perf_counter() - begin) * 1000


def _stop(manager: Any, client: Any) -> None:
    client.stop_channels()
    manager.shutdown_kernel(now=True)


def _result(name: str, ours: list[float], theirs: list[float], target: float) -> dict[str, Any]:
    m_ours, m_base = statistics.median(ours), statistics.median(theirs)
    ratio = m_ours / m_base
    verdict = "ok" if ratio <= target else "MISSED"
    return {
        "name": name,
        "kind": "kernel",
        "median_ms": round(m_ours, 2),
        "baseline_median_ms": round(m_base, 2),
        "ratio": round(ratio, 2),
        "target_ratio": target,
        "value": f"{m_ours:8.1f} ms vs {m_base:8.1f} ms  x{ratio:.2f}  target <= x{target:g}: "
        f"{verdict}",
    }


def measure(workdir: Path, runs: int) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="pysb-bench-kernel-") as tmp:
        root = Path(tmp)
        specs = _install(root)
        starts: dict[str, list[float]] = {"sandboxed": [], "plain": []}
        trivial: dict[str, list[float]] = {"sandboxed": [], "plain": []}
        plots: dict[str, list[float]] = {"sandboxed": [], "plain": []}
        for _ in range(max(3, runs // 3)):
            for name in ("plain", "sandboxed"):
                manager, client, elapsed = _start(specs, name, workdir)
                try:
                    starts[name].append(elapsed)
                    for _ in range(20):
                        trivial[name].append(_cell(client, "1"))
                    _cell(client, "import matplotlib.pyplot as plt")
                    _cell(client, PLOT)  # the first figure: font and backend set-up
                    for _ in range(5):
                        plots[name].append(_cell(client, PLOT))
                finally:
                    _stop(manager, client)
    return [
        _result("kernel start to first execute_reply", starts["sandboxed"], starts["plain"], 1.3),
        _result("trivial cell round trip", trivial["sandboxed"], trivial["plain"], 1.2),
        _result("plotting cell (matplotlib, PNG)", plots["sandboxed"], plots["plain"], 1.2),
    ]


def _case(index: int) -> Any:
    cache: dict[str, list[dict[str, Any]]] = {}

    def case(workdir: Path, runs: int) -> dict[str, Any]:
        if "results" not in cache:
            cache["results"] = measure(workdir, runs)
        return cache["results"][index]

    return case


#: Three results of one measurement (run.py calls each case in turn; the first measures).
CASES = [_case(0), _case(1), _case(2)]
