# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|TCP|*|*|OUT
# rule: net=DENY|*|127.0.0.0/8|*|OUT
# needs: hosts-name
# expect: net ConnectionRefusedError

"""Objective: reach 127.0.0.1 despite net=DENY of 127.0.0.0/8, through a host name from /etc/hosts.
"""

from _harness import attempt


def payload():
    import socket
    port = int(open('port.txt').read())
    s = socket.socket()
    s.settimeout(5)
    s.connect((open('name.txt').read().strip(), port))
    data = s.recv(16)
    s.close()
    assert data == b'hello', data
    return data


attempt(payload)
