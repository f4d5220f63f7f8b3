"""The program sees CPython's behaviour where the rules require no difference (issue 27).

Each test here reproduces one cause the CPython regression tests found (tests/cpython): the
exception class and errno of a refused access to a missing path, ``os.supports_dir_fd``,
signal timing, bytearray paths, ``_imp.create_builtin`` with a spec of another importlib,
the look of the wrappers, socket kinds. Each runs the same snippet with plain python as the
control and under the armed guard.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.unit.guard.harness import run_armed

PERMISSIVE = "python-import=*\npython-api=ALLOW:*\nexpose-ro=/\nexpose-rw={rw}\nnet=ALLOW|*|*|*|*\n"


def _plain(code: str, cwd: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _both(code: str, tmp_path: Path, rules: str | None = None) -> tuple[list[str], list[str]]:
    rw = tmp_path / "rw"
    rw.mkdir(exist_ok=True)
    armed = run_armed(code, rules or PERMISSIVE.format(rw=rw), tmp_path)
    assert armed.returncode == 0, armed.stderr
    assert armed.refused() is None, armed.stdout
    return _plain(code, tmp_path), armed.lines


MISSING = """
import os, errno, sqlite3
missing = os.path.join(os.path.dirname(os.__file__), "no-such-dir-27", "x.pyc")
cases = {
    "unlink": lambda: os.unlink(missing),
    "rmdir": lambda: os.rmdir(missing),
    "open-w": lambda: open(missing, "w"),
    "open-a": lambda: open(missing, "a"),
    "os.open-creat": lambda: os.open(missing, os.O_WRONLY | os.O_CREAT),
    "open-r+": lambda: open(missing, "r+"),
    "mkdir": lambda: os.mkdir(missing),
    "rename-src": lambda: os.rename(missing, missing + ".2"),
    "chmod": lambda: os.chmod(missing, 0o644),
    "truncate": lambda: os.truncate(missing, 0),
    "symlink": lambda: os.symlink("/etc/hostname", missing),
    "sqlite3": lambda: sqlite3.connect(missing),
}
for name, case in cases.items():
    try:
        case()
        print(name, "no error")
    except OSError as exc:
        print(name, "FileNotFoundError" if isinstance(exc, FileNotFoundError) else "other",
              errno.errorcode.get(exc.errno))
    except sqlite3.OperationalError as exc:
        print(name, "OperationalError", exc)
"""


def test_refused_access_to_a_missing_path_raises_what_python_raises(tmp_path: Path) -> None:
    """Cause 1: removing, creating in, or changing a path that does not exist, in a read-only
    area, fails with CPython's ``FileNotFoundError`` (ENOENT), not the rule's
    ``PermissionError``; ``sqlite3.connect`` in a missing directory with SQLite's
    ``OperationalError`` (test.support's clean-up helpers tolerate only those)."""

    plain, armed = _both(MISSING, tmp_path)
    assert armed == plain
    assert "unlink FileNotFoundError ENOENT" in armed
    assert "sqlite3 OperationalError unable to open database file" in armed


def test_refusal_of_a_new_file_still_names_a_rule_that_can_be_written(tmp_path: Path) -> None:
    """Creating a file in an existing read-only directory is still refused (the access the
    rules deny), and the suggested line names a path that exists (a rule on a missing path is
    an error)."""

    ro = tmp_path / "ro"
    ro.mkdir()
    code = f"""
try:
    open({str(ro / "new" / "deeper")!r}.rsplit("/", 1)[0], "w")
except PermissionError as exc:
    print(type(exc).__name__, exc.denial.suggestion)
"""
    armed = run_armed(code, f"expose-ro={tmp_path}\npython-import=*\n", tmp_path)
    assert armed.lines == [f"RulePermissionError expose-rw={ro}"], armed.stdout + armed.stderr


SUPPORTS = """
import os, shutil
print("open", os.open in os.supports_dir_fd, "mkfifo", os.mkfifo in os.supports_dir_fd)
print("stat", os.stat in os.supports_dir_fd, os.stat in os.supports_fd,
      os.stat in os.supports_follow_symlinks, "scandir", os.scandir in os.supports_fd)
print("rmtree", shutil._use_fd_functions, shutil.rmtree.avoids_symlink_attacks)
"""


def test_wrapped_functions_keep_their_place_in_os_supports_sets(tmp_path: Path) -> None:
    """Cause 2: a wrapper stands where its original stood in ``os.supports_dir_fd`` and the
    other sets, so ``shutil.rmtree`` keeps its symlink-attack-safe descriptor version (with
    ``ignore=`` rules too, where ``os.stat``/``os.scandir`` are wrapped)."""

    plain, armed = _both(SUPPORTS, tmp_path)
    assert armed == plain
    assert "rmtree True True" in armed
    rules = PERMISSIVE.format(rw=tmp_path / "rw") + "ignore=*.secret\n"
    plain, armed = _both(SUPPORTS, tmp_path, rules)
    assert armed == plain


BUFFERS = """
import os, sys, warnings
warnings.simplefilter("always")
path = bytearray(os.fsencode({path!r}))
with warnings.catch_warnings(record=True) as seen:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT)
        os.close(fd)
        print("os.open ok", [str(w.message) for w in seen])
    except TypeError as exc:
        print("os.open TypeError", exc)
    try:
        os.unlink(bytearray(os.fsencode({path!r})))
        print("unlink ok")
    except TypeError as exc:
        print("unlink TypeError", exc)
"""


def test_bytearray_paths_are_taken_as_cpython_takes_them(tmp_path: Path) -> None:
    """Cause 4: CPython 3.11 takes a ``bytearray`` path with a ``DeprecationWarning`` (3.12
    raises ``TypeError``): the ``os.open`` wrapper does the same, with CPython's texts, and
    the hook judges the path of an unwrapped function (``os.unlink``) on a copy."""

    code = BUFFERS.format(path=str(tmp_path / "rw" / "made"))
    plain, armed = _both(code, tmp_path)
    assert armed == plain


SIGNALS = """
import os, signal, socket, time, _thread
hits = []
signal.signal(signal.SIGALRM, lambda *a: hits.append("alarm"))
signal.setitimer(signal.ITIMER_REAL, 1e-6)
time.sleep(0.5)
print("setitimer then sleep", hits)

class Stop(Exception):
    pass

def stop(signum, frame):
    raise Stop

signal.signal(signal.SIGALRM, stop)
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(("127.0.0.1", 0))
signal.setitimer(signal.ITIMER_REAL, 0.2)
try:
    sock.recvfrom(16)
except Stop:
    print("recvfrom interrupted")
fifo = os.path.join(os.getcwd(), "rw", "fifo-%d" % os.getpid())
os.mkfifo(fifo)
signal.setitimer(signal.ITIMER_REAL, 0.2)
try:
    os.open(fifo, os.O_RDONLY)
except Stop:
    print("os.open interrupted")
signal.signal(signal.SIGINT, stop)
try:
    _thread.interrupt_main()
    for _ in range(10):
        pass
    print("interrupt_main: no exception")
except Stop:
    print("interrupt_main caught")
"""


def test_signal_handlers_run_on_time_while_a_wrapper_runs(tmp_path: Path) -> None:
    """Cause 3: a signal that arrives while a wrapped function runs (``setitimer``, a
    blocking ``recvfrom`` or ``os.open``, ``interrupt_main``) has its handler run then, as in
    CPython, not at the next audit event: the handler interrupts the call it was meant to."""

    plain, armed = _both(SIGNALS, tmp_path)
    assert armed == plain
    assert "setitimer then sleep ['alarm']" in armed


LOOKS = """
import signal, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for name in ("sendto", "recvfrom", "connect", "sendmsg"):
    method = getattr(socket.socket, name)
    print(name, method.__name__, method.__qualname__)
for call in (lambda: s.sendto(), lambda: s.connect(), lambda: s.recvfrom(),
             lambda: socket.socket.sendto()):
    try:
        call()
    except TypeError as exc:
        print("TypeError", exc)
s.close()
import inspect
# test_signal's rule (for pydoc): a Python function of the signal module says "signal"
print("signal module", sorted({getattr(signal, n).__module__ for n in dir(signal)
      if inspect.isroutine(getattr(signal, n)) and not inspect.isbuiltin(getattr(signal, n))}))
"""


def test_wrappers_look_like_the_originals(tmp_path: Path) -> None:
    """Cause 8: the socket pre-checks and the wrappers show the C function's name, qualified
    name and module, and a wrong call gets the C function's own ``TypeError``."""

    plain, armed = _both(LOOKS, tmp_path)
    assert armed == plain


SPECS = """
import _imp, importlib.util
class Spec:  # what a second, source-loaded importlib's ModuleSpec looks like to _imp
    def __init__(self, name, origin=None):
        self.name, self.origin = name, origin
print("builtin", type(_imp.create_builtin(Spec("_imp"))).__name__)
json_spec = importlib.util.find_spec("_json")
module = _imp.create_dynamic(Spec("_json", json_spec.origin)) if json_spec.origin != "built-in" \\
    else _imp.create_builtin(Spec("_json"))
print("dynamic", type(module).__name__)
try:
    _imp.create_builtin(object())
except AttributeError as exc:
    print("no name", type(exc).__name__)
"""


def test_imp_takes_the_spec_of_another_importlib(tmp_path: Path) -> None:
    """Cause 5: ``_imp.create_builtin``/``create_dynamic`` take any spec with a ``name`` (and
    ``origin``), as CPython does -- test_importlib's ``Source_*`` tests load a second
    importlib from source, whose ``ModuleSpec`` is another class."""

    plain, armed = _both(SPECS, tmp_path)
    assert armed == plain
    assert "builtin module" in armed


SOCKETS = """
import os, socket
udplite = getattr(socket, "IPPROTO_UDPLITE", None)
if udplite is not None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM, udplite) as s:
        print("udplite", s.proto == udplite)
a, b = socket.socketpair()
with socket.socket(family=12345, type=socket.SOCK_STREAM, fileno=os.dup(a.fileno())) as s:
    print("unknown family label", s.family)
"""


def test_ip_socket_kinds_and_sockets_of_existing_descriptors(tmp_path: Path) -> None:
    """Cause 9: a UDP-Lite socket is an IP datagram socket (judged by the UDP rules), and a
    socket made from an existing descriptor with a family CPython does not know (only a
    label: no socket is created) is not refused as a raw socket."""

    plain, armed = _both(SOCKETS, tmp_path)
    assert armed == plain


SQLITE = """
import sqlite3, sys
connection = sqlite3.connect(":memory:")
try:
    connection.cursor(None)
    print("cursor(None) ran")
except TypeError:
    print("cursor(None) TypeError")
seen = []
sys.unraisablehook = lambda unraisable: seen.append(getattr(unraisable.object, "__name__", "?"))
sqlite3.enable_callback_tracebacks(True)
def authorizer_cb(*args):
    raise ValueError
connection.set_authorizer(authorizer_cb)
try:
    connection.execute("select 1")
except sqlite3.DatabaseError:
    pass
print("reported under", seen[:1])
"""


def test_sqlite_connections_behave_as_cpython_s(tmp_path: Path) -> None:
    """Cause 6: ``cursor(None)`` raises CPython's ``TypeError`` (the guarded connection took
    ``None`` for "no factory"), and an authorizer that raises is reported under its own name,
    not the guard's composition."""

    plain, armed = _both(SQLITE, tmp_path)
    assert armed == plain
    assert "reported under ['authorizer_cb']" in armed


def test_a_bytearray_path_is_refused_while_another_thread_runs(tmp_path: Path) -> None:
    """The hook judges a copy of a ``bytearray`` path; another thread could change the buffer
    between CPython's copy and the hook's, so while one runs the path is refused with a
    message that says to pass bytes (3.12 refuses such a path before any event: skipped)."""

    if sys.version_info >= (3, 12):
        return
    code = f"""
import os, threading, time, warnings
warnings.simplefilter("ignore")
stop = threading.Event()
worker = threading.Thread(target=stop.wait)
worker.start()
try:
    os.unlink(bytearray(os.fsencode({str(tmp_path / "rw" / "missing")!r})))
except PermissionError as exc:
    print(type(exc).__name__, "pass bytes" in str(exc))
finally:
    stop.set()
    worker.join()
"""
    (tmp_path / "rw").mkdir()
    armed = run_armed(code, PERMISSIVE.format(rw=tmp_path / "rw"), tmp_path)
    assert armed.lines == ["RulePermissionError True"], armed.stdout + armed.stderr
