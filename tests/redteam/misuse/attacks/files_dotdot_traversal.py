# rule: expose-ro=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: escape the exposed directory with '..' segments.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import os
    print(open(os.path.join('.', 'a', '..', '..', 'outside', 'secret.txt')).read())


attempt(payload)
