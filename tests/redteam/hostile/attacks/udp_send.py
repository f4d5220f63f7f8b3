"""Send a UDP datagram to a loopback port that no rule grants (exfiltration). argv: PORT"""

import socket
import sys
from _verdict import attempt


def send():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    return s.sendto(b"exfiltrated", ("127.0.0.1", int(sys.argv[1])))


attempt("udp_send", send)
