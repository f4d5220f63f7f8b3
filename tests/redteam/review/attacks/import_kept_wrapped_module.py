# rule: expose-ro=.
# expect: import ModuleNotFoundError

"""Objective: import posix (the os functions) with no python-import rule.
"""

from _harness import attempt


def payload():
    import posix
    return posix.getcwd()


attempt(payload)
