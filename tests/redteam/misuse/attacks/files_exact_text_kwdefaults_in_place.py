# rule: expose-ro=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: read ../outside/secret.txt through ``dir_fd`` after changing, *in place*, the
keyword defaults of the guard's path conversion that the wrapped ``os.open`` uses inside its
hidden generator. ``os.open.__globals__`` (no audit event) is a guard module's namespace;
assigning a function's ``__kwdefaults__`` is refused, but the dict it holds could be changed
item by item with no event. With the "exact int" default made a ``str`` subclass of the
program's, such a path passed as given, taken for a descriptor: the ``dir_fd`` rewrite was
skipped and ``posix.open`` judged the path from the current directory.

Under python-sb with the rules above: the guard's functions that run after arming keep no
keyword defaults (a tuple of positional defaults cannot change): the open is refused.
"""
from _harness import attempt


def payload():
    import os

    class Path(str):
        pass

    for function in list(getattr(os.open, "__globals__", {}).values()):
        kwdefaults = getattr(function, "__kwdefaults__", None)
        if type(kwdefaults) is dict and "_int" in kwdefaults:
            kwdefaults["_int"] = Path
    directory = os.open(".", os.O_RDONLY)
    os.chdir("a/b")  # from here, ../outside/secret.txt is a path in the project
    fd = os.open(Path("../outside/secret.txt"), os.O_RDONLY, dir_fd=directory)
    data = os.read(fd, 100)
    assert data == b"the secret\n", data


attempt(payload)
