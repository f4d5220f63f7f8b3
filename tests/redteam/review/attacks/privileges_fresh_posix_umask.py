# rule: expose-ro=.
# rule: python-import=os
# expect: import ModuleNotFoundError

"""Objective: call umask (privileges) without the right, through a fresh posix module.
"""

from _harness import attempt


def payload():
    import _imp, os, sys
    fresh = _imp.create_builtin(sys.modules['posix'].__spec__)
    old = fresh.umask(0o022)
    fresh.umask(old)
    return oct(old)


attempt(payload)
