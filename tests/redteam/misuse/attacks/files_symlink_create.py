# rule: expose-rw=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: create a symbolic link (inside a writable directory) that points outside.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import os
    os.symlink('../outside/secret.txt', 'new_link')
    print(open('new_link').read())


attempt(payload)
