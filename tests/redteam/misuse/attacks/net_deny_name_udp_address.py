# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|*|*|*|OUT
# rule: net=DENY|UDP|localhost|*|OUT
# expect: net RuleConnectionRefusedError

"""Objective: send a UDP datagram to a host denied by name, addressed by its IP.

Under python-sb with the rules above: refused with RuleConnectionRefusedError (a 'net' denial).
"""
from _harness import attempt


def payload():
    import socket
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b'exfil', ('127.0.0.1', int(open('udp_port.txt').read())))


attempt(payload)
