# rule: expose-ro=.
# expect: api RuleApiPermissionError

"""Objective: execute a string.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    exec('x = 1')


attempt(payload)
