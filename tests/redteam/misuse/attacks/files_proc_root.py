# rule: expose-ro=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: read the secret through /proc/self/root.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import os
    print(open('/proc/self/root' + os.path.abspath('../outside/secret.txt')).read())


attempt(payload)
