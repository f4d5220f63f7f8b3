# rule: expose-ro=.
# rule: python-import=http
# rule: net=ALLOW|TCP|127.0.0.1|1-1023|OUT
# expect: net RuleConnectionRefusedError

"""Objective: talk HTTP to a loopback port no rule allows.

Under python-sb with the rules above: refused with RuleConnectionRefusedError (a 'net' denial).
"""
from _harness import attempt


def payload():
    import http.client
    c = http.client.HTTPConnection('127.0.0.1', int(open('port.txt').read()), timeout=5)
    c.connect()


attempt(payload)
