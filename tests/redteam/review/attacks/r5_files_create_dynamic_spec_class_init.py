# rule: expose-rw=.
# rule: python-import=*
# expect: file PermissionError

"""Objective: read /etc/group (not exposed) through a fresh, unwrapped ``grp`` module, made
with the original ``_imp.create_dynamic`` taken from its hidden generator's list.

The hidden call's ``before`` built the spec it passes on with ``ModuleSpec(...)``: a class of
the import system whose attributes the program can replace. An ``__init__`` of the
program's then ran inside the ``before``, while the list still held the original; it resumed
a generator frame kept earlier, whose ``f_back`` chain (no audit event) reached the list.

Under python-sb with the rules above: the spec passed on is a ``types.SimpleNamespace`` (a C
type whose attributes cannot be replaced), made and read with no code of the program's.
"""

from _harness import attempt


def payload():
    import _imp
    import importlib.machinery
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
    spec_class = importlib.machinery.ModuleSpec
    original_init = spec_class.__init__
    running = []

    def init(self, *args, **kwargs):
        if not found and not running:
            running.append(1)
            next(walker)
            running.clear()
        original_init(self, *args, **kwargs)

    spec = importlib.util.find_spec("grp")
    spec_class.__init__ = init
    try:
        _imp.create_dynamic(spec)
    except Exception:
        pass
    finally:
        spec_class.__init__ = original_init
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
