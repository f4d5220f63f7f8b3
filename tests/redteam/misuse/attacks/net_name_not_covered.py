# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|TCP|127.0.0.1|*|OUT
# expect: net RuleConnectionRefusedError

"""Objective: resolve a host name that no rule covers.

Under python-sb with the rules above: refused with RuleConnectionRefusedError (a 'net' denial).
"""
from _harness import attempt


def payload():
    import socket
    print(socket.getaddrinfo(open('name.txt').read().strip(), 80))


attempt(payload)
