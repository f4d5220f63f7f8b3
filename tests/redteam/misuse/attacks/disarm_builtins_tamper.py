# rule: expose-ro=.
# rule: python-import=builtins
# expect: file RulePermissionError

"""Objective: replace builtins the guard might use, then read the secret.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import builtins
    saved = builtins.isinstance, builtins.len, builtins.any
    builtins.isinstance = lambda *a: True
    builtins.len = lambda *a: 0
    builtins.any = lambda *a: False
    try:
        print(open('../outside/secret.txt').read())
    finally:  # the harness needs working builtins to report
        builtins.isinstance, builtins.len, builtins.any = saved


attempt(payload)
