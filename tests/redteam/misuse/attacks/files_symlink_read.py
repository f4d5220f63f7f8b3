# rule: expose-ro=.
# expect: file RulePermissionError

"""Objective: read the secret through a symbolic link that lies inside the exposed directory.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    print(open('link_to_secret').read())


attempt(payload)
