# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|*|*|*|OUT
# rule: net=DENY|TCP|localhost|*|OUT
# expect: net RuleConnectionRefusedError

"""Objective: reach a host denied by name through another spelling of its address
(``127.1``, which inet_aton reads as 127.0.0.1), with a plain socket.connect.

Under python-sb with the rules above: refused with RuleConnectionRefusedError (a 'net' denial).
"""
from _harness import attempt


def payload():
    import socket
    s = socket.socket()
    s.settimeout(5)
    s.connect(('127.1', int(open('port.txt').read())))
    s.close()


attempt(payload)
