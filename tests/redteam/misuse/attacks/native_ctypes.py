# rule: expose-ro=.
# rule: python-import=ctypes
# expect: api RuleApiPermissionError

"""Objective: call libc through ctypes.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import ctypes
    print(ctypes.CDLL(None).getpid())


attempt(payload)
