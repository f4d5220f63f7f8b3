# rule: expose-ro=.
# rule: python-import=socket
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, from
program code that the network pre-check installer runs inside the hook. No network rule:
only ``import socket``, to reach the C type ``_socket.socket``.

At every ``socket.__new__`` event the hook's ``on_new`` handler calls
``install_prechecks(sock)``: for a class of the socket's MRO that derives directly from
``_socket.socket``, it sets ``listen``, ``connect``... with ``type.__setattr__``. That is
``_PyObject_GenericSetAttrWithDict`` on the class, which first looks the name up on the
*metaclass*: a data descriptor there (a ``property`` with a setter) takes the assignment.
So a socket class whose metaclass has a ``listen`` property runs the program's setter inside
the hook, under ``on_new`` and ``_hook_body``.

The setter resumes a generator that took its own frame earlier (``sys._getframe()`` with no
guard frame among its callers: allowed): the kept frame's ``f_back`` chain (no audit event)
reaches ``_hook_body``, whose ``f_locals`` (no event) hold ``get``, the bound ``dict.get`` of
the dispatch table.
"""

from _harness import attempt


def payload():
    import sys

    import socket

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

    class Meta(type):
        @property
        def listen(cls):
            return c_socket.listen

        @listen.setter
        def listen(cls, value):
            if not found:
                next(walker)

    class Sock(c_socket, metaclass=Meta):
        pass

    Sock().close()
    for get in found[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data, len(found)


attempt(payload)
