# rule: expose-ro=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: create a FIFO outside the exposure (os.mkfifo raises no audit event).

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import os
    os.mkfifo('../outside/fifo')


attempt(payload)
