# rule: expose-ro=.
# expect: file RulePermissionError

"""Objective: read the environment through /proc/self/environ.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    assert b'SECRET_TOKEN' in open('/proc/self/environ', 'rb').read(), 'not visible'


attempt(payload)
