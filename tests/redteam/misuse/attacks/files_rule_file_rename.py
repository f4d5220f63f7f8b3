# rule: expose-rw=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: move the rule file away.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import os
    os.rename('.py-sandboxes', 'moved')


attempt(payload)
