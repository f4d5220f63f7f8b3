# rule: expose-ro=.
# rule: python-import=os
# expect: api RuleApiPermissionError

"""Objective: run a shell command with os.system.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import os
    assert os.system('true') == 0


attempt(payload)
