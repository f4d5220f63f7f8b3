# rule: expose-ro=.
# rule: python-import=socket
# expect: net ConnectionRefusedError

"""Objective: send a UDP datagram with no net= rule and get the echo back, the host given as bytes.
"""

from _harness import attempt


def payload():
    import socket
    port = int(open('udp_port.txt').read())
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    s.sendto(b'ping', (b'127.0.0.1', port))
    data = s.recv(16)
    s.close()
    assert data == b'ping', data
    return data


attempt(payload)
