"""How a program's start and end look to it: the collector, and its objects freed at exit.

python-sb pauses the collector for its own start and, last before the program's first
instruction, freezes the objects of the start (``gc.freeze()``) and puts the collector back
(``launch/child.py``, section "the collector"); at exit it frees the program's objects itself,
still guarded, as CPython's finalization would (``child.release_program``: the exec'd
interpreter ends with ``os._exit``, and ``none``'s ``__main__`` is among the frozen objects).
What must hold for the program, whatever the provider:

- the collector is on when the program starts, with the thresholds it would have had, and the
  program's own garbage is collected as in a plain interpreter, cycles and ``__del__`` at exit
  included (the same output as ``python3``);
- a file the program never closed holds what it wrote, an archive kept in a global is
  complete (its ``__del__`` ran), and a ``__del__`` at exit is judged by the guard;
- only python-sb's own processes are paused or frozen: a partial-mode host (the caller's
  process) is never touched, and its workers, which import the program's module before the
  guard is armed, are not paused either.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import base_env, run_python, run_sb
from tests.kernel.support import require_provider

PROGRAM = """
import gc, json, sys

class Node:
    def __init__(self, name):
        self.name = name
        self.peer = self

    def __del__(self):
        sys.stdout.write("freed " + self.name + "\\n")

Node("cycle-1")                       # garbage in a cycle: only the collector frees it
gc.collect()
print(json.dumps({"enabled": gc.isenabled(), "threshold": gc.get_threshold(),
                  "frozen": gc.get_freeze_count() > 0}))
sys.stdout.flush()
Node("at-exit")                        # freed by the collection at the interpreter's exit
"""


def _rules(work: Path, provider: str) -> None:
    (work / ".py-sandboxes").write_text(
        f"os-sandbox={provider}\nexpose-ro={work}\npython-import=gc\npython-import=json\n"
    )


def _plain(work: Path, tmp_path: Path) -> list[str]:
    proc = run_python(["prog.py"], cwd=work, env=base_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


@pytest.mark.parametrize("provider", ["none", "subprocess"])
def test_the_program_starts_with_the_collector_on_and_its_garbage_collected(
    tmp_path: Path, provider: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "prog.py").write_text(PROGRAM)
    _rules(work, provider)
    plain = _plain(work, tmp_path)
    proc = run_sb(["prog.py"], cwd=work, env=base_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    state = json.loads(lines[1])
    assert state["enabled"] is True
    assert tuple(state["threshold"]) == tuple(json.loads(plain[1])["threshold"])
    assert state["frozen"] is True  # python-sb's start objects: out of every collection
    # The same frees, in the same order, as under plain python: the program's cycle by its
    # gc.collect(), the last one by the collection at the interpreter's exit.
    assert [lines[0], *lines[2:]] == [plain[0], *plain[2:]]
    assert lines[2:] == ["freed at-exit"]


def test_the_collector_stays_off_when_the_program_turns_it_off(tmp_path: Path) -> None:
    """A program's own ``gc.disable()`` is the program's: python-sb's exit does not undo it
    (the collector is put back once, before the program, never after)."""

    work = tmp_path / "work"
    work.mkdir()
    (work / "prog.py").write_text("import gc\ngc.disable()\nprint(gc.isenabled())\n")
    _rules(work, "none")
    proc = run_sb(["prog.py"], cwd=work, env=base_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False"]


HOST = """
import gc, json, sys
from pysandboxes import sandbox, sandboxes

@sandbox
def state():
    import gc
    return [gc.isenabled(), gc.get_freeze_count()]

before = [gc.isenabled(), gc.get_freeze_count()]
with sandboxes(rules=sys.argv[1]):
    worker = state()
print(json.dumps({"host_before": before, "host_after": [gc.isenabled(), gc.get_freeze_count()],
                  "worker": worker}))
"""


def test_a_partial_mode_host_and_its_worker_are_left_alone(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "host.py").write_text(HOST)
    rules = work / "rules.py-sandboxes"
    rules.write_text(f"os-sandbox=subprocess\nexpose-ro={work}\npython-import=gc\n")
    proc = run_python(["host.py", str(rules)], cwd=work, env=base_env(tmp_path), timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert report["host_before"] == [True, 0]
    assert report["host_after"] == [True, 0]  # the caller's process: never paused or frozen
    assert report["worker"] == [True, 0]  # imports the program's module before arming


LEFT_OPEN = """
import sys, zipfile
log = open("log.txt", "w")
log.write("written, never closed\\n")
archive = zipfile.ZipFile("out.zip", "w")
archive.writestr("inside.txt", "kept in a global, never closed")
print("done")
"""


@pytest.mark.parametrize("provider", ["none", "subprocess", "landlock", "bwrap", "unshare"])
def test_what_the_program_left_open_is_written_out_at_exit(tmp_path: Path, provider: str) -> None:
    import zipfile

    require_provider(provider)
    work = tmp_path / "work"
    work.mkdir()
    (work / "prog.py").write_text(LEFT_OPEN)
    (work / ".py-sandboxes").write_text(
        f"os-sandbox={provider}\nexpose-rw={work}\npython-import=zipfile\n"
    )
    proc = run_sb(["prog.py"], cwd=work, env=base_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n"
    assert (work / "log.txt").read_text() == "written, never closed\n"
    with zipfile.ZipFile(work / "out.zip") as archive:  # its central directory was written
        assert archive.read("inside.txt") == b"kept in a global, never closed"


AT_EXIT = """
import atexit, os, sys
class Late:
    def __init__(self):
        self.open, self.write, self.path, self.flags = os.open, os.write, sys.argv[1], os.O_RDONLY
    def __del__(self):
        try:
            self.open(self.path, self.flags)
            self.write(1, b"read at exit\\n")
        except Exception as exc:
            self.write(1, ("refused at exit: " + type(exc).__name__ + "\\n").encode())
late = Late()
atexit.register(lambda: os.write(1, b"handler\\n"))
print("main")
"""


@pytest.mark.parametrize("provider", ["none", "subprocess", "landlock"])
def test_a_del_at_exit_runs_after_the_atexit_handlers_and_is_judged(
    tmp_path: Path, provider: str
) -> None:
    """The program's ``atexit`` handlers run first, its objects are freed after them, and a
    ``__del__`` then is the program's code under the guard (the control: plain python reads
    the file). The review corpus's ``disarm_exit_global_del`` is the attack form. Under
    landlock the Python layer refuses first, as it does for any read (bwrap and unshare: the
    file does not exist in their tree, which the guard reports as CPython would, unlogged:
    docs/python-layer.md)."""

    require_provider(provider)
    work = tmp_path / "work"
    work.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("s")
    (work / "prog.py").write_text(AT_EXIT)
    (work / ".py-sandboxes").write_text(
        f"os-sandbox={provider}\nexpose-ro={work}\npython-import=atexit,os\n"
    )
    plain = run_python(["prog.py", str(secret)], cwd=work, env=base_env(tmp_path))
    assert plain.stdout.splitlines() == ["main", "handler", "read at exit"], plain.stderr
    denials = tmp_path / "denials.jsonl"
    proc = run_sb(
        [f"--denials={denials}", "prog.py", str(secret)], cwd=work, env=base_env(tmp_path)
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["main", "handler", "refused at exit: RulePermissionError"]
    logged = [json.loads(line) for line in denials.read_text().splitlines()]
    assert [(d["kind"], d["target"]) for d in logged] == [("file", str(secret))]
