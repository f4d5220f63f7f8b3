"""Attach to a host process's System V shared memory segment and read it (no Python API: libc).
argv: KEY SECRET_TEXT"""

import ctypes
import sys
from _verdict import attempt, libc, raise_errno

SHM_RDONLY = 0o10000


def steal():
    c = libc()
    c.shmat.restype = ctypes.c_void_p
    shmid = c.shmget(int(sys.argv[1]), 0, 0)
    if shmid < 0:
        raise_errno()
    address = c.shmat(shmid, None, SHM_RDONLY)
    if address in (None, ctypes.c_void_p(-1).value):
        raise_errno()
    return ctypes.string_at(address, 64)


attempt("sysv_shm", steal, secret=sys.argv[2])
