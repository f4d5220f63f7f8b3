# rule: expose-ro=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, reached from
a builtin name shadowed in the guard modules' namespaces.

The guard's modules are in ``sys.modules``; a module attribute is set with no audit event. A
closure of the guard that runs after arming and looks a builtin up by name (``any`` in the
import check's search of the finders, run when an import is refused) then calls the
program's function *inside the hook*: from there a generator frame kept earlier is resumed,
and its ``f_back`` chain (no event) reaches the hook's frame, whose ``get`` is the bound
``dict.get`` of the dispatch table.

Under python-sb with the rules above: the closures that run after arming look no name up in
a module's globals (captured when the guard is armed): nothing of the program runs in the
hook, and the read is refused.
"""
from _harness import attempt


def payload():
    import builtins
    import sys

    found = []

    def spy():
        me = sys._getframe()
        while True:
            yield
            frame = me.f_back
            while frame is not None:
                names = frame.f_locals
                if "get" in names and "strip" in names:
                    found.append(names["get"])
                    break
                frame = frame.f_back

    walker = spy()
    next(walker)
    running = []

    def spying(real):
        def shadow(*args, **kwargs):
            if not running and not found:
                running.append(1)
                try:
                    next(walker)
                finally:
                    running.clear()
            return real(*args, **kwargs)

        return shadow

    names = ("any", "all", "isinstance", "len", "range", "iter", "next", "sorted", "getattr")
    for name, module in list(sys.modules.items()):
        if name.startswith("pysandboxes.guard"):
            for builtin in names:
                setattr(module, builtin, spying(getattr(builtins, builtin)))
    try:
        import a_module_nobody_has  # noqa: F401  (refused: the import check searches)
    except ImportError:
        pass
    for get in found[:1]:
        get.__self__.clear()
    with open("../outside/secret.txt") as f:
        data = f.read()
    assert data == "the secret\n", data


attempt(payload)
