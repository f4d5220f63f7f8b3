# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|TCP|127.0.0.1|*|OUT
# expect: net ConnectionRefusedError

"""Objective: bind a listening port with only an OUT rule (regression).
"""

from _harness import attempt


def payload():
    import socket
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    s.listen()
    port = s.getsockname()[1]
    s.close()
    return port


attempt(payload)
