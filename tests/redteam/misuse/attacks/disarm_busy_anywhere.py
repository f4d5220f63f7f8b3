# rule: expose-ro=.
# rule: ignore=./.env
# rule: net=ALLOW|TCP|127.0.0.1|80|OUT
# rule: python-import=*
# rule: python-api=ALLOW:threads
# rule: eval-syntax=arith
# rule: eval-call:calc=abs
# expect: api RuleApiPermissionError

"""Objective: find the guard's own enter() (which marks a thread busy: the hook then lets
signals, introspection and dynamic code through) anywhere a program can reach without an
audit event -- every loaded module's functions, classes' methods and containers, every
builtin, following closures, bound methods' owners, defaults and containers -- with the
wrapped modules and the eval machinery loaded; call it, then signal another process.

Under python-sb with the rules above: nothing reachable leads to enter() (the guard keeps it
in closures of functions the program never gets, or in hidden generators) and os.kill is
refused.
"""
from _harness import attempt


def payload():
    import builtins
    import os
    import sys

    for name in (
        "sqlite3", "threading", "signal", "socket", "ssl", "pwd", "grp", "subprocess",
        "multiprocessing", "asyncio", "mmap", "shutil", "tempfile", "pathlib", "logging",
        "pickle", "select", "selectors", "fcntl", "resource", "zipimport", "runpy", "inspect",
        "traceback", "weakref", "_thread", "_posixsubprocess", "faulthandler", "tracemalloc",
        "pysandboxes", "pysandboxes.evalguard.api", "pysandboxes.partial",
    ):
        try:
            __import__(name)
        except ImportError:
            pass

    seen = set()
    found = []

    def walk(obj, depth):
        if found or depth > 9 or id(obj) in seen:
            return
        seen.add(id(obj))
        if getattr(obj, "__qualname__", "") == "make_busy.<locals>.enter":
            found.append(obj)
            return
        cells = getattr(obj, "__closure__", None)
        for cell in cells if type(cells) is tuple else ():
            try:
                walk(cell.cell_contents, depth + 1)
            except ValueError:  # an empty cell
                pass
        for attr in ("__self__", "__func__", "__wrapped__", "__defaults__", "fget", "fset"):
            try:
                value = getattr(obj, attr)
            except Exception:
                continue
            if value is not None and type(value) is not type(sys):
                walk(value, depth + 1)
        kwdefaults = getattr(obj, "__kwdefaults__", None)
        if isinstance(kwdefaults, dict):
            for value in kwdefaults.values():
                walk(value, depth + 1)
        if isinstance(obj, (list, tuple, set, frozenset)):
            for value in list(obj)[:100]:
                walk(value, depth + 1)
        elif isinstance(obj, dict):
            for value in list(obj.values())[:300]:
                walk(value, depth + 1)
        elif isinstance(obj, type) and depth < 3:
            for value in list(vars(obj).values())[:200]:
                walk(value, depth + 1)

    def walk_safely(value):
        try:  # an odd object (a proxy, a descriptor) is skipped, not the search
            walk(value, 1)
        except Exception:
            pass

    for module in list(sys.modules.values()):
        try:
            namespace = dict(vars(module))
        except TypeError:
            continue
        for value in namespace.values():
            if type(value) is not type(sys):
                walk_safely(value)
    for value in vars(builtins).values():
        walk_safely(value)
    if found:
        found[0]()
    os.kill(os.getppid(), 0)  # plain Python: allowed (signal 0: no harm done)


attempt(payload)
