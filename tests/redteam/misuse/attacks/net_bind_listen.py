# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|TCP|127.0.0.1|*|OUT
# expect: net RuleConnectionRefusedError

"""Objective: open a listening socket (IN) when only OUT is allowed.

Under python-sb with the rules above: refused with RuleConnectionRefusedError (a 'net' denial).
"""
from _harness import attempt


def payload():
    import socket
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    s.listen()


attempt(payload)
