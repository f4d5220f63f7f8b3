# rule: expose-ro=.
# expect: api PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, from the
``__ne__`` of an object the hook compares while judging a forged CPython event. No module
but ``sys``, no rule but the file exposure.

``sys.audit`` is open to the program, and it can raise CPython's own event names with
arguments of its choosing (not only python-sb's private ``pysandboxes.*`` events): the
handlers assume CPython's argument types. ``on_mmap`` (``mmap.__new__``) asks
``args[0] != -1`` -- the file descriptor CPython passes as a C int; here an object of the
program's, whose ``__ne__`` runs under ``on_mmap`` and ``_hook_body``.

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

    class Descriptor:
        def __ne__(self, other):
            if not found:
                next(walker)
            return False  # "an anonymous map": nothing to judge

    sys.audit('mmap.__new__', Descriptor(), 4096, 0, 0)
    for get in found[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data, len(found)


attempt(payload)
