"""Send a datagram to a host service's Unix socket by its path (think /dev/log), without
connecting first. argv: SOCKET_PATH. Reached when sendto succeeded (the test checks what the
host's socket got)."""

import socket
import sys
from _verdict import attempt


def send():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    return s.sendto(b"injected from the sandbox", sys.argv[1])


attempt("unix_send", send)
