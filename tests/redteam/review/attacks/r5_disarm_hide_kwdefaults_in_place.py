# rule: expose-ro=.
# rule: python-import=readline
# expect: file PermissionError

"""Objective: read ../outside/secret.txt through readline's history file functions, after
changing *in place* the keyword defaults through which ``pysandboxes.guard.wrappers.hide``
builds every wrapper (``_hide``) and names it (``_named``'s ``_getattr``).

Assigning ``__kwdefaults__`` of a guard function is refused (``disarm_guard_function_kwdefaults``),
but the dict it holds could be changed item by item with no audit event: ``hide`` runs after
arming (``readline`` is wrapped when it is created), so the program's ``_hide`` got the
original, and ``_named``'s ``_getattr`` was handed the original too.
"""

from _harness import attempt


def payload():
    import sys

    originals = []
    wrappers = sys.modules.get("pysandboxes.guard.wrappers")
    if wrappers is not None:  # python-sb

        def unguarded(fn, kit, before, after=None, *rest):
            originals.append(fn)
            return lambda args, kwargs: fn(*args, **kwargs)

        def getattr_(obj, name, *default):
            originals.append(obj)
            return getattr(obj, name, *default)

        for function, name, value in ((wrappers.hide, "_hide", unguarded),
                                      (wrappers._named, "_getattr", getattr_)):
            kwdefaults = function.__kwdefaults__
            if type(kwdefaults) is dict and name in kwdefaults:
                kwdefaults[name] = value
    import readline

    read = readline.read_history_file
    for original in originals:
        if getattr(original, "__name__", "") == "read_history_file":
            read = original
    readline.clear_history()
    read("../outside/secret.txt")
    data = readline.get_history_item(1)
    assert data == "the secret", data
    return data


attempt(payload)
