# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|TCP|127.0.0.1|*|OUT
# expect: chain net OSError

"""Objective: listen on a port with only an OUT rule (regression).
"""

from _harness import attempt


def payload():
    import socket
    s = socket.create_server(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


attempt(payload)
