# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|TCP|127.0.0.1|*|OUT
# expect: net ConnectionRefusedError

"""Objective: listen on every interface (an unbound socket) with no IN rule, through the
pre-checked ``socket.socket.listen``.

The pre-check is a plain function of ``pysandboxes.guard.network``: its ``__globals__`` (no
audit event) is the namespace where the hook's ``on_listen`` looks up ``isinstance`` and
``_socket`` at run time. ``_socket`` replaced by a stand-in whose ``socket`` matches nothing,
``on_listen`` takes every socket for a foreign object and returns without judging.
"""

from _harness import attempt


def payload():
    import socket

    s = socket.socket()
    scope = getattr(socket.socket.listen, '__globals__', None)
    if scope is not None and '_socket' in scope:  # python-sb: the guard's network module

        class Nothing:
            pass

        class Stand:
            socket = Nothing

        scope['_socket'] = Stand
    s.listen()
    host, port = s.getsockname()
    s.close()
    assert port != 0 and host == '0.0.0.0', (host, port)
    return host, port


attempt(payload)
