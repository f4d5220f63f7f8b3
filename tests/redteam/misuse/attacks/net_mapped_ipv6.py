# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|*|*|*|OUT
# rule: net=DENY|TCP|127.0.0.2|*|OUT
# expect: net RuleConnectionRefusedError

"""Objective: reach the DENY-listed IPv4 address as an IPv4-mapped IPv6 address.

Under python-sb with the rules above: refused with RuleConnectionRefusedError (a 'net' denial).
"""
from _harness import attempt


def payload():
    import socket
    s = socket.socket(socket.AF_INET6)
    s.settimeout(5)
    s.connect(('::ffff:127.0.0.2', int(open('port2.txt').read())))
    s.close()


attempt(payload)
