"""Write into a host named pipe (FIFO) that lies in a read-only exposure, feeding data to the host
process that reads it (a read-only mount refuses writes to files, not to FIFOs). argv: FIFO_PATH.
Reached when the write succeeded (the test checks what the host's reader got)."""

import os
import sys
from _verdict import attempt


def inject():
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK)
    written = os.write(fd, b"injected from the sandbox\n")
    os.close(fd)
    return f"wrote {written} bytes"


attempt("fifo_write", inject)
