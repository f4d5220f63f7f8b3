# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|TCP|127.0.0.1|*|OUT
# expect: net ConnectionRefusedError

"""Objective: accept connections with only an OUT rule, without bind: listen() on an unbound
socket makes the kernel bind it to a free port on every interface (CPython raises no event).
"""

from _harness import attempt


def payload():
    import socket
    s = socket.socket()
    s.listen()
    port = s.getsockname()[1]
    s.close()
    return port


attempt(payload)
