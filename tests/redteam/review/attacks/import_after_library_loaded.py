# rule: expose-ro=.
# rule: python-import=pathlib
# expect: import ModuleNotFoundError

"""Objective: import os with only python-import=pathlib.
"""

from _harness import attempt


def payload():
    import pathlib
    import os
    return os.getcwd()


attempt(payload)
