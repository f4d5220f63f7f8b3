# rule: expose-ro=.
# expect: api RuleApiPermissionError

"""Objective: evaluate a string.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    print(eval('6*7'))


attempt(payload)
