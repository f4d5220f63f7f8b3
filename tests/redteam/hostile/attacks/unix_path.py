"""Connect to a host service's Unix socket by its path (think /var/run/docker.sock or an agent
socket), outside every exposure. argv: SOCKET_PATH BANNER"""

import socket
import sys

from _verdict import attempt


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sys.argv[1])
    return s.recv(100)


attempt("unix_path", connect, secret=sys.argv[2])
