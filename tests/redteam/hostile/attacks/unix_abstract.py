"""Connect to an abstract Unix socket that a host process listens on. argv: NAME BANNER"""

import socket
import sys
from _verdict import attempt


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect("\0" + sys.argv[1])
    return s.recv(100)


attempt("unix_abstract", connect, secret=sys.argv[2])
