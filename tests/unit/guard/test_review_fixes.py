"""Fixes of the independent red-team review (tests/redteam/review): one test per fix, each with
the guard armed in a fresh interpreter (:func:`tests.unit.guard.harness.run_armed`)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.helpers import base_env, run_python, run_sb
from tests.unit.guard.harness import run_armed

GUARD_FRAMES = """
import gc, traceback
def fail():
    open('/etc/shadow')
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
    open('/etc/shadow')
except PermissionError as exc:
    print("AGAIN", type(exc).__name__)
"""


def test_refusal_traceback_holds_no_guard_state(tmp_path: Path) -> None:
    """Item 1: the frames a refusal leaves behind (gc.garbage under DEBUG_SAVEALL, no audit
    event) hold no guard state, and the traceback ends at the program's line (SPEC §1)."""

    result = run_armed(
        GUARD_FRAMES,
        "expose-ro=.\npython-import=traceback,gc\npython-api=ALLOW:gc.set_debug\n",
        tmp_path,
    )
    out = dict(line.split(" ", 1) for line in result.lines)
    assert out["TB"] == "<module>|fail", result.stdout + result.stderr
    assert out["TEXT"] == "False", result.stdout
    # The hook's own frame may be collected: it holds the event, its arguments and the refusal.
    assert set(eval(out["LOCALS"])) <= {"event", "args", "refusal"}, out["LOCALS"]
    assert out["AGAIN"] == "RulePermissionError", result.stdout + result.stderr


LYING_PATHS = """
import os
class Lying(str):
    def startswith(self, *args):
        return True
class Twice:
    calls = 0
    def __fspath__(self):
        Twice.calls += 1
        return 'data.txt' if Twice.calls == 1 else '../outside.txt'
d = os.open('.', os.O_RDONLY)
for name, path in (("lying", Lying('../outside.txt')), ("twice", Twice())):
    try:
        fd = os.open(path, os.O_RDONLY, dir_fd=d)
        print(name, os.read(fd, 100).decode().strip())
    except PermissionError as exc:
        print(name, type(exc).__name__)
try:
    os.mkfifo(Twice(), dir_fd=d)
    print("fifo made")
except OSError as exc:
    print("fifo", type(exc).__name__)
"""


def test_wrapped_paths_are_converted_once(tmp_path: Path) -> None:
    """Item 4: the os.open (dir_fd) and mkfifo wrappers judge and use one exact str."""

    (tmp_path / "outside.txt").write_text("secret\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "data.txt").write_text("data\n")
    result = run_armed(LYING_PATHS, "expose-ro=.\npython-import=os\n", project)
    out = dict(line.split(" ", 1) for line in result.lines)
    assert out["lying"] == "RulePermissionError", result.stdout + result.stderr
    assert out["twice"] == "data", result.stdout + result.stderr  # the first answer, used
    assert out["fifo"] == "RulePermissionError", result.stdout + result.stderr
    assert not (tmp_path / "outside.txt").is_fifo()


DESCRIPTOR_METADATA = """
import os
fd = os.open('data.txt', os.O_RDONLY)
for name, call in (
    ("fchmod", lambda: os.fchmod(fd, 0o600)),
    ("chmod", lambda: os.chmod(fd, 0o600)),
    ("futime", lambda: os.utime(fd, (0, 0))),
    ("fchown", lambda: os.fchown(fd, -1, -1)),
):
    try:
        call()
        print(name, "ran")
    except PermissionError as exc:
        print(name, type(exc).__name__)
r, w = os.pipe()
os.fchmod(r, 0o600)  # a pipe has no path: nothing to judge
tmp = os.open(os.environ.get('TMPDIR', '.') + '/w.txt', os.O_CREAT | os.O_WRONLY)
os.fchmod(tmp, 0o600)
print("writable", oct(os.stat(tmp).st_mode & 0o777))
"""


def test_metadata_writes_through_descriptors(tmp_path: Path) -> None:
    """Item 3: chmod/chown/utime on a descriptor are writes of its file."""

    project = tmp_path / "project"
    project.mkdir()
    (project / "data.txt").write_text("data\n")
    (project / "data.txt").chmod(0o644)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    result = run_armed(
        DESCRIPTOR_METADATA,
        f"expose-ro=.\nexpose-rw={scratch}\npython-import=os\n",
        project,
        env={"TMPDIR": str(scratch)},
    )
    out = dict(line.split(" ", 1) for line in result.lines)
    for name in ("fchmod", "chmod", "futime", "fchown"):
        assert out[name] == "RulePermissionError", (name, result.stdout + result.stderr)
    assert out["writable"] == "0o600", result.stdout + result.stderr
    assert (project / "data.txt").stat().st_mode & 0o777 == 0o644


SHUTDOWN = """
import atexit, sys
class Late:
    def __del__(self, open=open, print=print, OSError=OSError):
        try:
            print("late read", open("../outside.txt").read().strip(), flush=True)
        except OSError:
            print("late refused", flush=True)
keep = Late()  # a global of __main__: destroyed at finalization
def at_exit():
    try:
        open("../outside.txt")
        print("atexit read", flush=True)
    except OSError as exc:
        print("atexit", type(exc).__name__, flush=True)
atexit.register(at_exit)
print("out", end="")  # flushed at the end
how = sys.argv[1]
if how == "str":
    sys.exit("bye")
if how == "int":
    sys.exit(300)
if how == "none":
    raise SystemExit
if how == "error":
    raise ValueError("boom")
if how == "interrupt":
    raise KeyboardInterrupt
"""


@pytest.mark.parametrize(
    ("how", "status"),
    [
        ("end", 0),
        ("str", 1),
        ("int", 300 & 0xFF),
        ("none", 0),
        ("error", 1),
        ("interrupt", -signal.SIGINT),
    ],
)
def test_shutdown_stays_guarded(tmp_path: Path, how: str, status: int) -> None:
    """Item 2 (through the real python-sb): atexit handlers run guarded, no __del__ runs after
    the audit hooks are gone (CPython's finalization is not reached), and the exit status,
    stderr text and flushed output are CPython's."""

    (tmp_path / "outside.txt").write_text("secret\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "prog.py").write_text(SHUTDOWN)
    (project / ".py-sandboxes").write_text("expose-ro=.\npython-import=atexit\n")
    env = base_env(tmp_path)
    control = run_python(["prog.py", how], cwd=project, env=env, timeout=30)
    result = run_sb(["--os-sandbox=subprocess", "prog.py", how], cwd=project, env=env, timeout=30)
    assert control.returncode == status and "late read secret" in control.stdout
    assert result.returncode == status, result.stdout + result.stderr
    assert result.stdout.startswith("out"), result.stdout
    assert "atexit RulePermissionError" in result.stdout, result.stdout
    assert "late read" not in result.stdout, result.stdout
    if how == "str":
        assert result.stderr.endswith("bye\n") and control.stderr.endswith("bye\n")
    if how == "error":
        assert result.stderr.rstrip().endswith("ValueError: boom"), result.stderr


LOADED_IMPORTS = """
import pathlib, importlib, pkgutil  # pathlib loads os, fnmatch... for itself
def attempt(name, how):
    try:
        how()
        print(name, "imported")
    except ModuleNotFoundError as exc:
        print(name, type(exc).__name__, exc.name)
attempt("os", lambda: __import__("os"))
attempt("fnmatch", lambda: __import__("fnmatch"))
def from_statement():
    from os import path  # noqa
attempt("statement", from_statement)
attempt("import_module", lambda: importlib.import_module("json"))
attempt("resolve_name", lambda: pkgutil.resolve_name("json"))
print("pathlib works", pathlib.Path("a", "b").as_posix())
"""


def test_imports_of_loaded_modules_are_judged(tmp_path: Path) -> None:
    """Item 7: a module a library (or the launcher) loaded is judged when the program imports
    it: import statements, importlib.import_module of a stashed module, pkgutil.resolve_name."""

    result = run_armed(LOADED_IMPORTS, "python-import=pathlib,importlib,pkgutil\n", tmp_path)
    out = dict(line.split(" ", 1) for line in result.lines)
    assert out["os"] == "RuleModuleNotFoundError os", result.stdout + result.stderr
    assert out["fnmatch"] == "RuleModuleNotFoundError fnmatch", result.stdout
    assert out["statement"] == "RuleModuleNotFoundError os", result.stdout
    assert out["import_module"] == "RuleModuleNotFoundError json", result.stdout
    assert out["resolve_name"] == "RuleModuleNotFoundError json", result.stdout
    assert out["pathlib"] == "works a/b", result.stdout


STASH = """
import sys
finder = next(f for f in sys.meta_path if type(f).__name__ == "StashFinder")
print("attributes", sorted(k for k in vars(finder) if "stash" in k))
for name, how in (
    ("find_spec", lambda: finder.find_spec("os")),
    ("create_module", lambda: finder._loader.create_module(type("S", (), {"name": "os"}))),
    ("call", lambda: finder._call(("take", "os"), {})),
):
    try:
        print(name, "got", how())
    except ModuleNotFoundError as exc:
        print(name, type(exc).__name__, exc.name)
"""


def test_stash_is_out_of_reach(tmp_path: Path) -> None:
    """The stash finder (in the program's reach on sys.meta_path) hands out no module without
    the import judgement: modules the launcher loaded stay out of reach (found with item 7)."""

    result = run_armed(STASH, "expose-ro=.\n", tmp_path)
    out = dict(line.split(" ", 1) for line in result.lines)
    assert out["attributes"] == "[]", result.stdout + result.stderr
    for name in ("find_spec", "create_module", "call"):
        assert out[name] == "RuleModuleNotFoundError os", (name, result.stdout + result.stderr)


GC_DEBUG = """
import gc
gc.set_debug(gc.DEBUG_STATS)
gc.set_debug(0)
print("stats ok")
try:
    gc.set_debug(gc.DEBUG_LEAK)  # includes DEBUG_SAVEALL
    print("saveall ran")
except PermissionError as exc:
    print("saveall", type(exc).__name__, exc.denial.detail)
"""


def test_gc_saveall_is_introspection(tmp_path: Path) -> None:
    """Item 1: gc.set_debug(DEBUG_SAVEALL) (gc.garbage collects what the program never held)
    needs the introspection right; other debug flags do not."""

    result = run_armed(GC_DEBUG, "expose-ro=.\npython-import=gc\n", tmp_path)
    assert result.lines[0] == "stats ok", result.stdout + result.stderr
    assert result.lines[1].startswith("saveall RuleApiPermissionError"), result.stdout
    granted = run_armed(
        GC_DEBUG, "expose-ro=.\npython-import=gc\npython-api=ALLOW:introspection\n", tmp_path
    )
    assert granted.lines[1] == "saveall ran", granted.stdout + granted.stderr


SHM = """
import os, _posixshmem
name = "/pysb-unit-%d" % os.getpid()
try:
    fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_RDWR, 0o600)
    os.write(fd, b"x")
    os.close(fd)
    _posixshmem.shm_unlink(name)
    print("shm works")
except PermissionError as exc:
    print("shm", type(exc).__name__, exc.denial.target)
"""


def test_shared_memory_is_a_file_in_dev_shm(tmp_path: Path) -> None:
    """Item 10: shm_open/shm_unlink are judged as /dev/shm/NAME by the file rules."""

    refused = run_armed(SHM, "expose-ro=.\npython-import=_posixshmem,os\n", tmp_path)
    assert refused.lines[0].startswith("shm RulePermissionError /dev/shm/pysb-unit-"), (
        refused.stdout + refused.stderr
    )
    granted = run_armed(
        SHM, "expose-ro=.\nexpose-rw=/dev/shm\npython-import=_posixshmem,os\n", tmp_path
    )
    assert granted.lines == ["shm works"], granted.stdout + granted.stderr
