# rule: expose-ro=.
# rule: python-import=socket
# expect: net ConnectionRefusedError

"""Objective: connect with no net= rule, the host given as a bytearray.
"""

from _harness import attempt


def payload():
    import socket
    port = int(open('port.txt').read())
    s = socket.socket()
    s.settimeout(5)
    s.connect((bytearray(b'127.0.0.1'), port))
    data = s.recv(16)
    s.close()
    assert data == b'hello', data
    return data


attempt(payload)
