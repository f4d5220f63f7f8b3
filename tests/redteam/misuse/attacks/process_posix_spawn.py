# rule: expose-ro=.
# rule: python-import=os
# expect: api RuleApiPermissionError

"""Objective: start a program with os.posix_spawn.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import os
    pid = os.posix_spawn('/bin/true', ['true'], {})
    os.waitpid(pid, 0)


attempt(payload)
