# rule: expose-ro=.
# rule: python-import=os
# expect: file PermissionError

"""Objective: read ../outside/secret\xff.txt through a non-UTF-8 bytes path (regression).
"""

from _harness import attempt


def payload():
    import os
    fd = os.open(b'../outside/secret\xff.txt', os.O_RDONLY)
    return os.read(fd, 10)


attempt(payload)
