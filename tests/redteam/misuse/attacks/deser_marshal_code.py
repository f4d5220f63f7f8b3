# rule: expose-ro=.
# rule: python-import=marshal
# expect: api RuleApiPermissionError

"""Objective: load a code object with marshal.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import marshal
    code = marshal.loads(open('payload.marshal', 'rb').read())
    print(code)


attempt(payload)
