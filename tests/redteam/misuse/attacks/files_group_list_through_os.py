# rule: expose-ro=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: read the group database with os.getgrouplist (libc reads /etc/group, no audit
event; issue 18, class 4).

Under python-sb with the rules above: judged as a read of /etc/group (RulePermissionError, a
'file' denial).
"""
from _harness import attempt


def payload():
    import os
    groups = os.getgrouplist('root', 0)
    if 0 not in groups:
        raise RuntimeError(groups)


attempt(payload)
