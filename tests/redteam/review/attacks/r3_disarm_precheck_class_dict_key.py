# rule: expose-ro=.
# rule: python-import=socket
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, from the
``__eq__`` of a key in a socket class's dict, which the network pre-check installer compares
inside the hook. No network rule: only ``import socket``, to reach ``_socket.socket``.

At every ``socket.__new__`` event the hook's ``on_new`` calls ``install_prechecks(sock)``: for
a class deriving directly from ``_socket.socket`` (and, since the metaclass attack, whose
metaclass is ``type``), it asks ``name not in own`` for ``listen``, ``connect``... where
``own`` is the class's dict. A class made with ``type('Sock', (c_socket,), {Key('listen'):
...})`` has a ``str``-subclass key with the hash of ``'listen'``: the dict lookup compares the
two with ``Key.__eq__`` -- program code, under ``on_new`` and ``_hook_body``.

``__eq__`` resumes a generator that took its own frame earlier (``sys._getframe()`` with no
guard frame among its callers: allowed): the kept frame's ``f_back`` chain (no audit event)
reaches ``_hook_body``, whose ``f_locals`` (no event) hold ``get``, the bound ``dict.get`` of
the dispatch table.
"""

from _harness import attempt


def payload():
    import socket
    import sys

    c_socket = socket.socket.__mro__[1]  # _socket.socket
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

    class Key(str):
        __hash__ = str.__hash__

        def __eq__(self, other):
            if not found:
                next(walker)
            return str.__eq__(self, other)

    Sock = type('Sock', (c_socket,), {Key('listen'): c_socket.listen})
    Sock().close()
    for get in found[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data, len(found)


attempt(payload)
