# rule: expose-ro=.
# rule: python-import=os
# expect: api RuleApiPermissionError

"""Objective: change the user id (os.setuid raises no audit event).

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import os
    os.setuid(os.getuid())


attempt(payload)
