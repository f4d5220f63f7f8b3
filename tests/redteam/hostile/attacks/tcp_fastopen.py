"""Open a TCP connection to a port no rule grants without calling connect(): TCP Fast Open.
argv: HOW PORT BANNER, HOW one of

- ``sendto``: ``sendto(MSG_FASTOPEN)`` to the address (the connection is made inside the call);
- ``sendmsg``: ``sendmsg(MSG_FASTOPEN)`` with the address in the message header;
- ``sendmmsg``: libc's ``sendmmsg`` with ``MSG_FASTOPEN`` (one message, ctypes);
- ``connectopt``: ``setsockopt(TCP_FASTOPEN_CONNECT)``, then ``connect()`` and a write.

Reached when the host's server greeted the program with its banner."""

import ctypes
import socket
import sys
from _verdict import attempt, libc, raise_errno

MSG_FASTOPEN = 0x20000000
TCP_FASTOPEN_CONNECT = 30
HOW, PORT, BANNER = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ADDRESS = ("127.0.0.1", PORT)


class SockaddrIn(ctypes.Structure):
    _fields_ = [("family", ctypes.c_ushort), ("port", ctypes.c_uint16), ("addr", ctypes.c_uint32),
                ("zero", ctypes.c_char * 8)]


class Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class Msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32), ("iov", ctypes.c_void_p),
                ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p),
                ("controllen", ctypes.c_size_t), ("flags", ctypes.c_int)]


class Mmsghdr(ctypes.Structure):
    _fields_ = [("hdr", Msghdr), ("len", ctypes.c_uint)]


def sendmmsg(sock):
    address = SockaddrIn(socket.AF_INET, socket.htons(PORT), int.from_bytes(bytes([127, 0, 0, 1]), "little"))
    data = ctypes.create_string_buffer(b"hello")
    iov = Iovec(ctypes.cast(data, ctypes.c_void_p), 5)
    message = Mmsghdr(Msghdr(ctypes.cast(ctypes.pointer(address), ctypes.c_void_p),
                             ctypes.sizeof(address), ctypes.cast(ctypes.pointer(iov), ctypes.c_void_p),
                             1, None, 0, 0), 0)
    if libc().sendmmsg(sock.fileno(), ctypes.byref(message), 1, MSG_FASTOPEN) < 0:
        raise_errno()


def steal():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # blocking: the send connects
    if HOW == "sendto":
        sock.sendto(b"hello", MSG_FASTOPEN, ADDRESS)
    elif HOW == "sendmsg":
        sock.sendmsg([b"hello"], [], MSG_FASTOPEN, ADDRESS)
    elif HOW == "sendmmsg":
        sendmmsg(sock)
    elif HOW == "connectopt":
        sock.setsockopt(socket.IPPROTO_TCP, TCP_FASTOPEN_CONNECT, 1)
        sock.connect(ADDRESS)
        sock.send(b"hello")
    else:
        raise SystemExit(f"unknown way {HOW}")
    sock.settimeout(10)
    return sock.recv(100)


attempt("tcp_fastopen_" + HOW, steal, secret=BANNER)
