"""Connect to a loopback TCP port that no rule grants. argv: PORT BANNER"""

import socket
import sys
from _verdict import attempt


def connect():
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
    return s.recv(100)


attempt("tcp_connect", connect, secret=sys.argv[2])
