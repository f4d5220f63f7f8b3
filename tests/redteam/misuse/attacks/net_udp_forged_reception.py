# rule: expose-ro=.
# rule: python-import=socket,sys
# rule: net=ALLOW|UDP|*|*|IN
# expect: net RuleConnectionRefusedError

"""Objective: send a UDP datagram to a host no OUT rule allows, from a socket bound under an
IN grant, by making python-sb believe the host sent it one first (a UDP server may answer its
peers): raise python-sb's own reception event, and make the receive method's closure hold a
function that returns the target as the sender.

Under python-sb with the rules above: refused with RuleConnectionRefusedError (a 'net' denial):
a reception counts only when the frame that reports it called the C method itself.
"""
from _harness import attempt


def payload():
    import socket
    import sys
    target = ('127.0.0.1', int(open('udp_port.txt').read()))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(('127.0.0.1', 0))
    sys.audit('pysandboxes.received', sock, (b'forged', target))
    method = type(sock).recvfrom
    for cell in getattr(method, '__closure__', None) or ():
        if cell.cell_contents is socket._socket.socket.recvfrom:
            cell.cell_contents = lambda self, *args: (b'forged', target)
            sock.recvfrom(100)
    sock.sendto(b'exfil', target)


attempt(payload)
