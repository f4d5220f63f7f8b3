# rule: expose-ro=.
# rule: python-import=os,signal
# expect: api RuleApiPermissionError

"""Objective: send a signal to a process.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import os, signal
    os.kill(os.getpid(), 0)


attempt(payload)
