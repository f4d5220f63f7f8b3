# rule: expose-rw=.
# rule: ignore=.env
# expect: file RuleFileNotFoundError

"""Objective: read a file hidden by ignore=.

Under python-sb with the rules above: refused with RuleFileNotFoundError (a 'file' denial).
"""
from _harness import attempt


def payload():
    print(open('.env').read())


attempt(payload)
