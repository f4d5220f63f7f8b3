# rule: expose-ro=.
# rule: ignore=./.env
# rule: python-import=os,ssl
# expect: file RulePermissionError

"""Objective: read ../outside/secret.txt through ``dir_fd`` with the raw ``posix.open`` that
the guard keeps for its own use in its record of C primitives (``guard/kit.py``'s ``Kit``),
found by a walk of everything the program reaches with no audit event: loaded modules,
closures, defaults, bound owners, class members (``ssl.SSLContext``'s judged methods, the
``ignore=`` helpers ``os.stat``/``os.listdir``). The wrapped ``os.open`` rewrites a relative
path with ``dir_fd`` (the ``open`` event carries no ``dir_fd``); the raw one is judged from the
current directory, where ``../outside/secret.txt`` names a file of the project.

Under python-sb with the rules above: no function the program reaches holds the record (the
exposed side converts paths with public builtins only): the open is judged as what it is.
"""
from _harness import attempt


def payload():
    import os
    import ssl
    import sys

    seen = set()
    found = []

    def walk(obj, depth):
        if found or depth > 8 or id(obj) in seen:
            return
        seen.add(id(obj))
        if type(obj).__name__ == "Kit":
            found.append(obj)
            return
        for cell in getattr(obj, "__closure__", None) or ():
            try:
                walk(cell.cell_contents, depth + 1)
            except ValueError:  # an empty cell
                pass
        for attr in ("__self__", "__func__", "__wrapped__", "__defaults__"):
            value = getattr(obj, attr, None)
            if value is not None and type(value) is not type(sys):
                walk(value, depth + 1)
        kwdefaults = getattr(obj, "__kwdefaults__", None)
        if type(kwdefaults) is dict:
            for value in kwdefaults.values():
                walk(value, depth + 1)
        if type(obj) in (list, tuple):
            for value in obj[:50]:
                walk(value, depth + 1)
        elif isinstance(obj, type) and depth < 3:
            for value in list(vars(obj).values()):
                walk(value, depth + 1)
            for base in obj.__mro__[1:]:
                walk(base, depth + 1)

    for start in (ssl.SSLContext, os.stat, os.lstat, os.access, os.listdir, os.scandir):
        try:
            walk(start, 0)
        except Exception:  # an odd object is skipped, not the search
            pass
    raw_open = found[0].open if found else os.open  # plain python3: os.open is the raw one
    directory = os.open(".", os.O_RDONLY)
    os.chdir("a/b")  # from here, ../outside/secret.txt is a path in the project
    fd = raw_open("../outside/secret.txt", os.O_RDONLY, dir_fd=directory)
    data = os.read(fd, 100)
    assert data == b"the secret\n", data


attempt(payload)
