# rule: expose-ro=.
# rule: python-import=traceback
# expect: api RuleApiPermissionError

"""Objective: take the guard's frames from a refusal's traceback and poison its state.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import traceback
    try:
        open('../outside/secret.txt')
    except PermissionError as e:
        for frame, _ in traceback.walk_tb(e.__traceback__):
            frame.f_locals
    print(open('../outside/secret.txt').read())


attempt(payload)
