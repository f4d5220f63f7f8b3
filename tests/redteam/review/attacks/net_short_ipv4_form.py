# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|TCP|*|*|OUT
# rule: net=DENY|*|127.0.0.0/8|*|OUT
# expect: net ConnectionRefusedError

"""Objective: reach 127.0.0.1 despite net=DENY of 127.0.0.0/8, written in the short form '127.1'.
"""

from _harness import attempt


def payload():
    import socket
    port = int(open('port.txt').read())
    s = socket.socket()
    s.settimeout(5)
    s.connect(('127.1', port))
    data = s.recv(16)
    s.close()
    assert data == b'hello', data
    return data


attempt(payload)
