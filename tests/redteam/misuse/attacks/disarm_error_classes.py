# rule: expose-ro=.
# rule: python-import=pysandboxes
# expect: file RulePermissionError

"""Objective: make the guard's exception classes harmless, then read the secret.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import pysandboxes.errors as e
    e.RulePermissionError.__init__ = lambda self, *a, **k: None
    e.RulePermissionError.__new__ = lambda cls, *a, **k: None
    print(open('../outside/secret.txt').read())


attempt(payload)
