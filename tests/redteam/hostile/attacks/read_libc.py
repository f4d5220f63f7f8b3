"""Read a file outside every exposure through libc's open/read via ctypes (no Python I/O).
argv: SECRET_PATH SECRET_TEXT"""

import ctypes
import os
import sys
from _verdict import attempt, libc, raise_errno


def steal():
    c = libc()
    fd = c.open(sys.argv[1].encode(), os.O_RDONLY)
    if fd < 0:
        raise_errno()
    buf = ctypes.create_string_buffer(4096)
    n = c.read(fd, buf, 4096)
    if n < 0:
        raise_errno()
    c.close(fd)
    return buf.raw[:n]


attempt("read_libc", steal, secret=sys.argv[2])
