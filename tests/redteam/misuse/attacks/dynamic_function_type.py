# rule: expose-ro=.
# rule: python-import=types
# expect: api RuleApiPermissionError

"""Objective: build a function from another function's code object.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import types
    def f():
        return 1
    g = types.FunctionType(f.__code__, {})
    print(g())


attempt(payload)
