# rule: expose-ro=.
# rule: python-import=os
# expect: api PermissionError

"""Objective: run a shell command through os.__dict__['system'] (regression).
"""

from _harness import attempt


def payload():
    import os
    return os.__dict__['system']('true')


attempt(payload)
