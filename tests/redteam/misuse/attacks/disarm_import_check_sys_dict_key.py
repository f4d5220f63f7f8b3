# rule: expose-ro=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, reached from
a key of the program's in ``sys``'s namespace.

When an import is refused, the import check asks whether the import system could have found
the module, reading ``sys.meta_path`` and ``sys.path_hooks`` from ``sys``'s dict -- with
``dict.get``, which compares the keys. With ``"meta_path"`` re-inserted under a ``str``
subclass key of the program's (same text, same hash), its ``__eq__`` ran *inside the hook*:
it resumed a generator frame kept earlier, whose ``f_back`` chain (no audit event) reached the
hook's frame, whose ``get`` is the bound ``dict.get`` of the dispatch table.

Under python-sb with the rules above: the check iterates the dict and compares exact ``str``
keys only: nothing of the program runs in the hook, and the read is refused.
"""
from _harness import attempt


def payload():
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

    class Key(str):
        __hash__ = str.__hash__

        def __eq__(self, other):
            if not found and not running:
                running.append(1)
                try:
                    next(walker)
                finally:
                    running.clear()
            return str.__eq__(self, other)

    namespace = sys.__dict__
    meta_path = namespace.pop("meta_path")
    namespace[Key("meta_path")] = meta_path
    try:
        import a_module_nobody_has  # noqa: F401  (refused: the import check searches)
    except ImportError:
        pass
    del namespace["meta_path"]
    namespace["meta_path"] = meta_path
    for get in found[:1]:
        get.__self__.clear()
    with open("../outside/secret.txt") as f:
        data = f.read()
    assert data == "the secret\n", data


attempt(payload)
