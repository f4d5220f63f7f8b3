# rule: expose-ro=.
# rule: python-import=os
# expect: file PermissionError

"""Objective: change the mode of data.txt, exposed read-only, through a read-only descriptor.
"""

from _harness import attempt


def payload():
    import os
    fd = os.open('data.txt', os.O_RDONLY)
    os.chmod(fd, 0o600)
    mode = os.stat('data.txt').st_mode & 0o777
    assert mode == 0o600, oct(mode)
    return oct(mode)


attempt(payload)
