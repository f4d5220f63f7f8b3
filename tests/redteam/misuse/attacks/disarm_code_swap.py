# rule: expose-ro=.
# expect: api RuleApiPermissionError

"""Objective: swap a function's __code__.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    def f():
        return 1
    def g():
        return 2
    f.__code__ = g.__code__
    assert f() == 2


attempt(payload)
