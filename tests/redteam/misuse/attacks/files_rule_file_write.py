# rule: expose-rw=.
# expect: file RulePermissionError

"""Objective: rewrite the rule file that governs the run (it lies in a writable directory).

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    open('.py-sandboxes', 'a').write('\npython-api=ALLOW:*\n')


attempt(payload)
