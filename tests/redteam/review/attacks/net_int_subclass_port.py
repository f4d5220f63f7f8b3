# rule: expose-ro=.
# rule: python-import=socket
# expect: net ConnectionRefusedError

"""Objective: connect with no net= rule, the port given as an int subclass.
"""

from _harness import attempt


def payload():
    class Port(int):
        pass

    import socket
    port = int(open('port.txt').read())
    s = socket.socket()
    s.settimeout(5)
    s.connect(('127.0.0.1', Port(port)))
    data = s.recv(16)
    s.close()
    assert data == b'hello', data
    return data


attempt(payload)
