# rule: expose-rw=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: create a hard link to the secret inside the writable directory.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import os
    os.link('../outside/secret.txt', 'hard')
    print(open('hard').read())


attempt(payload)
