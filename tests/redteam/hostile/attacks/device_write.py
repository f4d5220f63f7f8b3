"""Write to a device node that lies in a read-only exposure (a read-only mount refuses writes to
files and directories, not to devices: think of a copy of a terminal's or a disk's node).
argv: DEVICE_PATH. Reached when the write succeeded."""

import os
import sys
from _verdict import attempt


def write():
    fd = os.open(sys.argv[1], os.O_WRONLY)
    written = os.write(fd, b"to the device")
    os.close(fd)
    return f"wrote {written} bytes"


attempt("device_write", write)
