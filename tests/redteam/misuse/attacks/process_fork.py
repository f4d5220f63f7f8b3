# rule: expose-ro=.
# rule: python-import=os
# expect: api RuleApiPermissionError

"""Objective: fork the interpreter.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import os
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


attempt(payload)
