# rule: expose-ro=.
# rule: python-import=os
# expect: file PermissionError

"""Objective: change the times of data.txt, exposed read-only, through a read-only descriptor.
"""

from _harness import attempt


def payload():
    import os
    fd = os.open('data.txt', os.O_RDONLY)
    os.utime(fd, (0, 0))
    assert os.stat('data.txt').st_mtime == 0
    return 'touched'


attempt(payload)
