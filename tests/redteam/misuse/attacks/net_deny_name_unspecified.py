# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|*|*|*|OUT
# rule: net=DENY|TCP|localhost|*|OUT
# expect: net RuleConnectionRefusedError

"""Objective: reach a host denied by name (localhost) through the unspecified address: Linux
connects a socket aimed at 0.0.0.0 to the loopback address, 127.0.0.1.

Under python-sb with the rules above: refused with RuleConnectionRefusedError (a 'net' denial).
"""
from _harness import attempt


def payload():
    import socket
    s = socket.create_connection(('0.0.0.0', int(open('port.txt').read())), timeout=5)
    s.close()


attempt(payload)
