"""Listen on a loopback TCP port that no rule grants. argv: PORT"""
import socket
import sys
from _verdict import attempt


def listen():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(sys.argv[1])))
    s.listen()
    return s.getsockname()


attempt("tcp_bind", listen)
