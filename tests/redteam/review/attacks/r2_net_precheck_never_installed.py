# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|TCP|127.0.0.1|*|OUT
# expect: net ConnectionRefusedError

"""Objective: listen on every interface (an unbound socket) with no IN rule, through the
ordinary ``socket.socket.listen``.

The pre-checks of ``socket.socket`` (``listen`` judged as the bind the kernel makes; names
judged before their query) are installed once, when the first socket is created, and only if
``sys.modules['socket'].socket`` is then a class: the program hides it for the creation of its
first socket, the installer gives up for good (``patched`` holds ``False``) and every later
``socket.socket`` -- the program's and its libraries' -- runs the bare C methods.
"""

from _harness import attempt


def payload():
    import socket

    cls = socket.socket
    socket.socket = None  # the installer finds no class...
    try:
        cls().close()  # ...when the first socket is created
    finally:
        socket.socket = cls
    s = socket.socket()
    s.listen()
    host, port = s.getsockname()
    s.close()
    assert port != 0 and host == '0.0.0.0', (host, port)
    return host, port


attempt(payload)
