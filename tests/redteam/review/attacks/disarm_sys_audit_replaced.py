# rule: expose-ro=.
# rule: python-import=os
# expect: api PermissionError

"""Objective: silence the wrappers by replacing sys.audit, then call umask (regression).
"""

from _harness import attempt


def payload():
    import os, sys
    sys.audit = lambda *args: None
    old = os.umask(0o022)
    os.umask(old)
    return oct(old)


attempt(payload)
