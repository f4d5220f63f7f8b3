# rule: expose-ro=.
# rule: python-import=os
# expect: api PermissionError
# bypass: _imp.create_builtin(posix spec) gives a fresh posix whose umask/setuid/chroot/setsid/nice/abort/unshare/setns are not wrapped

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
