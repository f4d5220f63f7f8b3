# rule: expose-ro=.
# expect: api RuleApiPermissionError

"""Objective: install a tracer (it would see the guard's frames).

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import sys
    sys.settrace(lambda *a: None)


attempt(payload)
