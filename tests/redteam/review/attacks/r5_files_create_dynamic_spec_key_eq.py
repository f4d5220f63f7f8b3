# rule: expose-rw=.
# rule: python-import=*
# expect: file PermissionError

"""Objective: read /etc/group (not exposed) through a fresh, unwrapped ``grp`` module, made
with the original ``_imp.create_dynamic`` taken from its hidden generator's list.

The hidden call's ``before`` reads the spec's name and origin from the spec's instance dict,
while the generator's list still holds the original (nothing of the program may run then).
A key of the program's in that dict -- a ``str`` subclass equal to ``"name"``, with its hash
-- made the lookup call its ``__eq__``: it resumed a generator frame kept earlier, whose
``f_back`` chain (no audit event) reached the hidden generator's list.

Under python-sb with the rules above: the ``before`` reads the dict by iterating it in C and
comparing exact ``str`` keys only: nothing of the program runs, and the walk finds nothing.
"""

from _harness import attempt


def payload():
    import _imp
    import importlib.util
    import sys

    found = []

    def spy():
        me = sys._getframe()
        while True:
            yield
            frame = me.f_back
            while frame is not None:
                box = frame.f_locals.get("box")
                if type(box) is list and box:
                    found.extend(box)
                    break
                frame = frame.f_back

    walker = spy()
    next(walker)

    class Key(str):
        __hash__ = str.__hash__

        def __eq__(self, other):
            if not found:
                next(walker)
            return str.__eq__(self, other)

    spec = importlib.util.find_spec("grp")
    namespace = spec.__dict__
    namespace[Key("name")] = namespace.pop("name")
    try:
        _imp.create_dynamic(spec)
    except Exception:
        pass
    create = _imp.create_dynamic
    for function in found:
        if getattr(function, "__name__", "") == "create_dynamic":
            create = function
    fresh = create(importlib.util.find_spec("grp"))
    _imp.exec_dynamic(fresh)
    groups = fresh.getgrall()
    assert groups
    return len(groups)


attempt(payload)
