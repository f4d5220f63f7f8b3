# rule: expose-ro=.
# rule: python-import=os,fcntl,struct
# expect: file RulePermissionError

"""Objective: change a file's attributes through a read-only descriptor.

The kernel lets the owner set a file's flags (append-only, immutable, no-dump...) with
FS_IOC_SETFLAGS on a descriptor opened for reading: ioctl was not judged (issue 18, class 3).
The control sets FS_NODUMP_FL on data.txt (as root or the owner, on ext4) and restores it.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt

FS_IOC_GETFLAGS, FS_IOC_SETFLAGS, FS_NODUMP_FL = 0x80086601, 0x40086602, 0x40


def payload():
    import fcntl
    import os
    import struct
    fd = os.open('data.txt', os.O_RDONLY)
    flags = struct.unpack('l', fcntl.ioctl(fd, FS_IOC_GETFLAGS, bytes(8)))[0]
    fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack('l', flags | FS_NODUMP_FL))
    changed = struct.unpack('l', fcntl.ioctl(fd, FS_IOC_GETFLAGS, bytes(8)))[0]
    fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack('l', flags))
    if not changed & FS_NODUMP_FL:
        raise RuntimeError('flag not set')


attempt(payload)
