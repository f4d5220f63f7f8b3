"""Fixes of the independent red-team review (tests/redteam/review): one test per fix, each with
the guard armed in a fresh interpreter (:func:`tests.unit.guard.harness.run_armed`)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.guard.harness import run_armed

GUARD_FRAMES = """
import gc, traceback
def fail():
    open('/etc/shadow-of-nothing/x')
gc.set_debug(gc.DEBUG_SAVEALL)
try:
    fail()
except PermissionError as exc:  # the traceback is not looked at: nothing cuts it
    exc.cycle = exc
    del exc
try:
    fail()
except PermissionError as exc:
    print("TB", "|".join(repr(f).rsplit("code ", 1)[-1][:-1]
                         for f, _ in traceback.walk_tb(exc.__traceback__)))
    print("TEXT", "pysandboxes/guard" in "".join(traceback.format_exception(exc)))
    exc.cycle = exc
    del exc
gc.collect()
gc.set_debug(0)
guard = [o for o in gc.garbage if type(o).__name__ == 'frame'
         and '/pysandboxes/guard/' in repr(o)]
gc.garbage.clear()
print("LOCALS", sorted({k for f in guard for k in f.f_locals}))
try:
    open('/etc/shadow-of-nothing/x')
except PermissionError as exc:
    print("AGAIN", type(exc).__name__)
"""


def test_refusal_traceback_holds_no_guard_state(tmp_path: Path) -> None:
    """Item 1: the frames a refusal leaves behind (gc.garbage under DEBUG_SAVEALL, no audit
    event) hold no guard state, and the traceback ends at the program's line (SPEC §1)."""

    result = run_armed(GUARD_FRAMES, "expose-ro=.\npython-import=traceback\n", tmp_path)
    out = dict(line.split(" ", 1) for line in result.lines)
    assert out["TB"] == "<module>|fail", result.stdout + result.stderr
    assert out["TEXT"] == "False", result.stdout
    # The hook's own frame may be collected: it holds the event, its arguments and the refusal.
    assert set(eval(out["LOCALS"])) <= {"event", "args", "refusal"}, out["LOCALS"]
    assert out["AGAIN"] == "RulePermissionError", result.stdout + result.stderr
