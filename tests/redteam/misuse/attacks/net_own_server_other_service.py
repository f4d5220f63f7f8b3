# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|TCP|127.0.0.1|0|IN
# expect: net RuleConnectionRefusedError

"""Objective: with a server of its own on loopback (which the IN grant lets it reach), connect
to another local service on loopback that no OUT rule allows.

Under python-sb with the rules above: refused with RuleConnectionRefusedError (a 'net' denial):
only a port a socket of the program holds belongs to the IN grant (docs/network.md).
"""
from _harness import attempt


def payload():
    import socket
    server = socket.socket()
    server.bind(('127.0.0.1', 0))
    server.listen()
    own = socket.create_connection(('127.0.0.1', server.getsockname()[1]), timeout=5)
    own.close()
    s = socket.create_connection(('127.0.0.1', int(open('port.txt').read())), timeout=5)
    s.close()


attempt(payload)
