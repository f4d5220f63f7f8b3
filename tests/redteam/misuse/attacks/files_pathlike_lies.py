# rule: expose-ro=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: a path object whose __fspath__ answers differently on each call.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import os
    class P:
        n = 0
        def __fspath__(self):
            P.n += 1
            return '../outside/secret.txt' if P.n == 1 else 'data.txt'
    print(open(P()).read())


attempt(payload)
