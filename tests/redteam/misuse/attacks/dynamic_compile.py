# rule: expose-ro=.
# expect: api RuleApiPermissionError

"""Objective: compile a string to a code object.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    print(compile('1', '<s>', 'eval'))


attempt(payload)
