# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|TCP|127.0.0.1|1-1023|OUT
# expect: net RuleConnectionRefusedError

"""Objective: connect to a loopback port no rule allows.

Under python-sb with the rules above: refused with RuleConnectionRefusedError (a 'net' denial).
"""
from _harness import attempt


def payload():
    import socket
    s = socket.create_connection(('127.0.0.1', int(open('port.txt').read())), timeout=5)
    s.close()


attempt(payload)
