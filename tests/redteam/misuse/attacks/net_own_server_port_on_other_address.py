# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|TCP|127.0.0.0/8|*|IN
# expect: absent

"""Objective: bind its own server on 127.0.0.1 at the port of another service that listens on
127.0.0.2, then connect to 127.0.0.2 at that port, hoping the grant of its own port covers the
other loopback address too.

Under python-sb with the rules above: not reached. The program's socket does not hold
127.0.0.2, so the connection is refused as the kernel refuses a port nothing listens on
(ConnectionRefusedError, no denial: docs/network.md, the program's own server).
"""
from _harness import attempt


def payload():
    import socket
    port = int(open('port2.txt').read())
    server = socket.socket()
    server.bind(('127.0.0.1', port))
    server.listen()
    s = socket.create_connection(('127.0.0.2', port), timeout=5)
    s.close()


attempt(payload)
