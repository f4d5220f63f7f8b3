# rule: expose-ro=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: change directory out of the exposure, then read with a relative path.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import os
    os.chdir('../outside')
    print(open('secret.txt').read())


attempt(payload)
