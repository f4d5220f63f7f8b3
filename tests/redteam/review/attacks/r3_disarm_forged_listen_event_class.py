# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, from a
``__class__`` property that the hook's network handler reads while judging an event the
program raised itself. No module but ``sys``, no rule but the file exposure.

``sys.audit`` is open to the program, and the hook judges whatever event name it is given:
``sys.audit("pysandboxes.listen", obj)`` reaches ``on_listen`` as if a socket's pre-check had
raised it. ``on_listen`` checks ``isinstance(args[0], _socket.socket)``; for an object that is
not a socket, CPython's ``isinstance`` then reads ``obj.__class__`` -- a property of the
program's class: program code, under ``on_listen`` and ``_hook_body``.

The getter resumes a generator that took its own frame earlier (``sys._getframe()`` with no
guard frame among its callers: allowed): the kept frame's ``f_back`` chain (no audit event)
reaches ``_hook_body``, whose ``f_locals`` (no event) hold ``get``, the bound ``dict.get`` of
the dispatch table.
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

    class Fake:
        @property
        def __class__(self):
            if not found:
                next(walker)
            return Fake

    sys.audit('pysandboxes.listen', Fake())
    for get in found[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data, len(found)


attempt(payload)
