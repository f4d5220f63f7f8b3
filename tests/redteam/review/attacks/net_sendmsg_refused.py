# rule: expose-ro=.
# rule: python-import=socket
# expect: net ConnectionRefusedError

"""Objective: UDP sendmsg to an address no rule allows (regression).
"""

from _harness import attempt


def payload():
    import socket
    port = int(open('udp_port.txt').read())
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    s.sendmsg([b'ping'], [], 0, ('127.0.0.1', port))
    data = s.recv(16)
    s.close()
    return data


attempt(payload)
