"""Start-up of ``python-sb hello.py`` against ``python3 hello.py`` (issue 3; DESIGN decision 7).

Target: at most 30 ms over plain python3 for ``os-sandbox=subprocess`` (python-sb parses its
rules, then execs a second interpreter; ``none`` runs in its own). The rule file turns the Python
layer on and off so that its cost is visible apart from the launcher's.
"""

from __future__ import annotations

from pathlib import Path

from cases import PYTHON_SB, CommandCase


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


CASES = [
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
if _guard_ready():
    CASES.append(
        CommandCase(
            name="python-sb subprocess hello.py, py-sandbox=true",
            command=lambda w: [PYTHON_SB, str(w / "guarded" / "hello.py")],
        )
    )
