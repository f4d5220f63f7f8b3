# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, from the
``__eq__`` of an attribute name in a forged ``object.__setattr__`` event. No module but
``sys``, no rule but the file exposure.

The fix of the forged ``pysandboxes.listen``/``mmap.__new__`` events made those two handlers
take exact types; the others still trust CPython's argument types. ``on_setattr`` asks
``args[1] == "__code__"`` -- CPython passes the attribute name as a ``str``;
``sys.audit("object.__setattr__", None, Name("x"), None)`` passes a ``str`` subclass whose
``__eq__`` runs under ``on_setattr`` and ``_hook_body``.

It resumes a generator that took its own frame earlier (``sys._getframe()`` with no guard
frame among its callers: allowed): the kept frame's ``f_back`` chain (no audit event) reaches
``_hook_body``, whose ``f_locals`` (no event) hold ``get``, the bound ``dict.get`` of the
dispatch table.
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
                if 'get' in names and 'strip' in names:
                    found.append(names['get'])
                    break
                frame = frame.f_back

    walker = spy()
    next(walker)

    class Name(str):
        __hash__ = str.__hash__

        def __eq__(self, other):
            if not found:
                next(walker)
            return str.__eq__(self, other)

    sys.audit('object.__setattr__', None, Name('x'), None)
    for get in found[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data, len(found)


attempt(payload)
