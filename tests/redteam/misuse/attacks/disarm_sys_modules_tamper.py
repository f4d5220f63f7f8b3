# rule: expose-ro=.
# rule: python-import=pysandboxes,os
# expect: file RulePermissionError

"""Objective: patch the policy decision functions and os.path in sys.modules, then read the secret.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import sys, os
    import pysandboxes.policy.decide as d
    d.path_access = lambda *a: 'rw'
    os.path.realpath = lambda p, **k: os.path.abspath('data.txt')
    sys.modules['posixpath'] = os.path
    print(open('../outside/secret.txt').read())


attempt(payload)
