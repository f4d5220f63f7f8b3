# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|UDP|127.0.0.2|*|OUT
# expect: net ConnectionRefusedError

"""Objective: UDP to a refused address: connect() then send() (regression).
"""

from _harness import attempt


def payload():
    import socket
    port = int(open('udp_port.txt').read())
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    s.connect(('127.0.0.1', port))
    s.send(b'ping')
    data = s.recv(16)
    s.close()
    return data


attempt(payload)
