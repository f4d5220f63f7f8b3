# rule: expose-ro=.
# rule: python-import=socket
# expect: net ConnectionRefusedError

"""Objective: connect with no net= rule, the host a str subclass whose methods lie (regression).
"""

from _harness import attempt


def payload():
    class Host(str):
        def startswith(self, *a):
            return False
        def __eq__(self, other):
            return False
        __hash__ = str.__hash__

    import socket
    port = int(open('port.txt').read())
    s = socket.socket()
    s.settimeout(5)
    s.connect((Host('127.0.0.1'), port))
    data = s.recv(16)
    s.close()
    assert data == b'hello', data
    return data


attempt(payload)
