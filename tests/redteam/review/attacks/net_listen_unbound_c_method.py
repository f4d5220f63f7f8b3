# rule: expose-ro=.
# rule: python-import=socket
# rule: python-import=_socket
# rule: net=ALLOW|TCP|127.0.0.1|*|OUT
# expect: net ConnectionRefusedError
# bypass: _socket.socket.listen called directly on an unbound socket skips socket.socket's pre-check, and CPython 3.11 raises no event for listen: the kernel binds a port on every interface

"""Objective: as net_listen_unbound, through the C method (no pre-check in front of it).
"""

from _harness import attempt


def payload():
    import _socket
    import socket
    s = socket.socket()
    _socket.socket.listen(s)
    port = s.getsockname()[1]
    s.close()
    return port


attempt(payload)
