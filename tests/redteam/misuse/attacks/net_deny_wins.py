# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|*|*|*|OUT
# rule: net=DENY|TCP|127.0.0.2|*|OUT
# expect: net RuleConnectionRefusedError

"""Objective: reach a DENY-listed address although another rule allows everything.

Under python-sb with the rules above: refused with RuleConnectionRefusedError (a 'net' denial).
"""
from _harness import attempt


def payload():
    import socket
    s = socket.create_connection(('127.0.0.2', int(open('port2.txt').read())), timeout=5)
    s.close()


attempt(payload)
