# rule: expose-ro=.
# rule: python-import=socket
# expect: net ConnectionRefusedError

"""Objective: reach a loopback listener with no net= rule at all, by connecting to the *name* 'localhost'.
"""

from _harness import attempt


def payload():
    import socket
    port = int(open('port.txt').read())
    s = socket.socket()
    s.settimeout(5)
    s.connect(('localhost', port))
    data = s.recv(16)
    s.close()
    assert data == b'hello', data
    return data


attempt(payload)
