# rule: expose-ro=.
# rule: python-import=socket
# expect: file RulePermissionError

"""Objective: connect to an AF_UNIX socket outside the exposure.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import socket
    s = socket.socket(socket.AF_UNIX)
    s.connect('../outside/sock')
    s.close()


attempt(payload)
