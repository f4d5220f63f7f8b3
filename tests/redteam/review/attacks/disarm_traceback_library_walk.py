# rule: expose-ro=.
# rule: python-import=traceback,os
# expect: api PermissionError

"""Objective: take the innermost frame of a refusal's traceback (a guard frame under python-sb)
     through traceback.walk_tb, a library (regression).
"""

from _harness import attempt


def payload():
    import os, traceback
    try:
        os.listdir('..')  # refused under python-sb: raised inside the hook
        os.listdir('/nonexistent directory')  # plain python3 (the control): some OSError
    except OSError as exc:
        tb = exc.__traceback__
    frames = [frame for frame, _ in traceback.walk_tb(tb)]
    return frames[-1].f_code.co_filename


attempt(payload)
