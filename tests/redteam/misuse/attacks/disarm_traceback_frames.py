# rule: expose-ro=.
# rule: python-import=traceback
# expect: file RulePermissionError

"""Objective: take the guard's frames from a refusal's traceback and poison its state.

Under python-sb with the rules above: a refusal's traceback ends at the program's line (the
guard's frames are cut from it, and cleared), so the state is untouched and the second open is
refused with RulePermissionError (a 'file' denial).
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
