# rule: expose-ro=.
# expect: file RulePermissionError

"""Objective: read a file outside every exposed directory.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    print(open('../outside/secret.txt').read())


attempt(payload)
