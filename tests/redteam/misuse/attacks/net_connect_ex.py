# rule: expose-ro=.
# rule: python-import=socket
# expect: net RuleConnectionRefusedError

"""Objective: connect with connect_ex (returns an error code instead of raising).

Under python-sb with the rules above: refused with RuleConnectionRefusedError (a 'net' denial).
"""
from _harness import attempt


def payload():
    import socket
    s = socket.socket()
    s.settimeout(5)
    assert s.connect_ex(('127.0.0.1', int(open('port.txt').read()))) == 0, 'not connected'


attempt(payload)
