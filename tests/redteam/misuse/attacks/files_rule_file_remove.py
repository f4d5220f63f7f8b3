# rule: expose-rw=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: delete the rule file.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import os
    os.remove('.py-sandboxes')


attempt(payload)
