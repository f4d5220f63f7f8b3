# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|*|*|*|OUT
# rule: net=DENY|*|localhost|*|OUT
# expect: net RuleConnectionRefusedError

"""Objective: reach a host denied by name (localhost, as metadata.internal would be) by
connecting to its hard-coded address, beside a rule that allows every host.

Under python-sb with the rules above: refused with RuleConnectionRefusedError (a 'net' denial):
python-sb resolves the DENY name at start and denies its addresses (issue 11, point 3).
"""
from _harness import attempt


def payload():
    import socket
    s = socket.create_connection(('127.0.0.1', int(open('port.txt').read())), timeout=5)
    s.close()


attempt(payload)
