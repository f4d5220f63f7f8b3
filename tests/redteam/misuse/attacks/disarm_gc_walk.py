# rule: expose-ro=.
# rule: python-import=gc
# expect: api RuleApiPermissionError

"""Objective: walk the garbage collector to the guard's closures, then read the secret.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import gc
    for obj in gc.get_objects():
        pass
    print(open('../outside/secret.txt').read())


attempt(payload)
