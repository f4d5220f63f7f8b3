"""The wrapped functions (CPython raises no event for them): refused, aliases covered, originals
out of reach; granted, they work."""

from __future__ import annotations

from pathlib import Path

from tests.unit.guard.harness import run_armed

CALLS = """
import _thread, threading, signal, faulthandler, importlib, json, os, sys
checks = {
    "start_new_thread": lambda: _thread.start_new_thread(int, ()),
    "start_new": lambda: _thread.start_new(int, ()),
    "threading": lambda: threading.Thread(target=int).start(),
    "interrupt_main": lambda: _thread.interrupt_main(),
    "stack_size": lambda: _thread.stack_size(1 << 20),
    "alarm": lambda: signal.alarm(0),
    "setitimer": lambda: signal.setitimer(signal.ITIMER_REAL, 0),
    "faulthandler": lambda: faulthandler.enable(),
    "reload": lambda: importlib.reload(json),
    "umask": lambda: os.umask(0o22),
    "setsid": lambda: os.setsid(),
    "nice": lambda: os.nice(0),
    "mknod": lambda: os.mknod("node"),
}
for name, call in checks.items():
    try:
        call()
        print(name, "ran")
    except PermissionError as exc:
        print(name, type(exc).__name__, exc.denial.detail)
"""


def test_wrapped_functions_are_refused(tmp_path: Path) -> None:
    result = run_armed(CALLS, "expose-ro=.\npython-import=*\n", tmp_path)
    out = dict(line.split(" ", 1) for line in result.lines)
    for name in ("start_new_thread", "start_new", "threading", "interrupt_main", "stack_size"):
        assert out[name] == "RuleApiPermissionError threads", (name, out)
    for name in ("alarm", "setitimer", "setsid", "nice"):
        assert out[name] == "RuleApiPermissionError process-control", (name, out)
    assert out["faulthandler"] == "RuleApiPermissionError introspection"
    assert out["reload"] == "RuleApiPermissionError introspection"
    assert out["umask"] == "RuleApiPermissionError privileges"
    assert out["mknod"].startswith("RulePermissionError")


def test_granted_categories_run(tmp_path: Path) -> None:
    rules = (
        "expose-rw=.\npython-import=*\npython-api=ALLOW:threads\n"
        "python-api=ALLOW:process-control\npython-api=ALLOW:introspection\n"
        "python-api=ALLOW:privileges\n"
    )
    code = CALLS.replace('"interrupt_main": lambda: _thread.interrupt_main(),', "")
    code = code.replace('"setsid": lambda: os.setsid(),', "")
    result = run_armed(code, rules, tmp_path)
    out = dict(line.split(" ", 1) for line in result.lines)
    assert set(out.values()) == {"ran"}, out


def test_originals_are_not_reachable_from_the_wrappers(tmp_path: Path) -> None:
    """Walk every closure cell and default of the wrappers: no original function is there."""

    code = """
import os, _thread, _posixsubprocess, posix
WRAPPED = {"setuid", "start_new_thread", "start_new", "fork_exec", "open", "mkfifo"}
seen, found = set(), []
def walk(obj, depth=0):
    if id(obj) in seen or depth > 6:
        return
    seen.add(id(obj))
    if type(obj).__name__ == "builtin_function_or_method" and getattr(obj, "__self__", None) in (
            posix, _thread, _posixsubprocess) and obj.__name__ in WRAPPED:
        found.append(obj.__name__)
    for cell in getattr(obj, "__closure__", None) or ():
        try:
            walk(cell.cell_contents, depth + 1)
        except ValueError:
            pass
    for value in (getattr(obj, "__defaults__", None) or ()):
        walk(value, depth + 1)
    for value in (getattr(obj, "__kwdefaults__", None) or {}).values():
        walk(value, depth + 1)
    walk(getattr(obj, "__self__", None), depth + 1)
for fn in (os.setuid, posix.setuid, _thread.start_new_thread, _posixsubprocess.fork_exec,
           os.open, os.mkfifo):
    walk(fn)
print("found", found)
print("wrapped", all(hasattr(f, "__closure__") for f in (os.setuid, _thread.start_new_thread,
      _thread.start_new, _posixsubprocess.fork_exec, os.open)))
"""
    result = run_armed(code, "expose-ro=.\npython-import=*\n", tmp_path)
    assert "found []" in result.lines, result.stdout + result.stderr
    assert "wrapped True" in result.lines


def test_thread_aliases_wrapped(tmp_path: Path) -> None:
    code = """
import _thread, threading
# threading's alias of the function it starts threads with (_start_joinable_thread from 3.13)
for name in ("_start_new_thread", "_start_joinable_thread"):
    if hasattr(threading, name):
        print(getattr(threading, name) is getattr(_thread, name[1:]))
        break
alias = _thread.start_new
print(alias is not _thread.start_new_thread and hasattr(alias, "__closure__"))
"""
    result = run_armed(code, "expose-ro=.\npython-import=*\n", tmp_path)
    assert result.lines == ["True", "True"], result.stdout + result.stderr


def test_wrapper_table_is_documented_and_tested() -> None:
    """Every wrapper is in the one table of docs/python-layer.md, and its test exists."""

    from pysandboxes.guard.wrappers import WRAPPERS
    from tests.helpers import REPO

    doc = (REPO / "docs" / "python-layer.md").read_text()
    table = doc[doc.index("## Wrappers") :]
    for wrapper in WRAPPERS:
        name = wrapper.target.rpartition(".")[2]
        assert f"`{wrapper.target}`" in table or f"`{name}`" in table, wrapper.target
        test_file = wrapper.test.split("::", 1)[0]
        assert (REPO / test_file).is_file(), (wrapper.target, wrapper.test)
        if "::" in wrapper.test:
            assert f"def {wrapper.test.split('::', 1)[1]}(" in (REPO / test_file).read_text()
