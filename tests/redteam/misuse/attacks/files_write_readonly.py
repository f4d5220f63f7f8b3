# rule: expose-ro=.
# expect: file RulePermissionError

"""Objective: overwrite a file of a read-only exposed directory.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    open('data.txt', 'w').write('overwritten')


attempt(payload)
