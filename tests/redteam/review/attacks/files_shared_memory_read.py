# rule: expose-ro=.
# rule: python-import=_posixshmem,os
# expect: file PermissionError

"""Objective: read a POSIX shared-memory object of another process (a file in /dev/shm).
"""

from _harness import attempt


def payload():
    import os, _posixshmem
    name = open('shm.txt').read()
    fd = _posixshmem.shm_open(name, os.O_RDONLY, 0)
    data = os.read(fd, 100)
    assert data == b'shmsecret', data
    return data


attempt(payload)
