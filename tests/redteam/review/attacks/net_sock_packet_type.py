# rule: expose-ro=.
# rule: python-import=socket
# needs: root
# expect: net ConnectionRefusedError
# bypass: on_new refuses SOCK_RAW only; Linux turns (AF_INET, SOCK_PACKET=10) into an AF_PACKET socket: raw link-layer frames, past every net= rule

"""Objective: create a packet socket (its kernel domain is AF_PACKET, 17). Nothing is sent.
"""

from _harness import attempt


def payload():
    import socket
    s = socket.socket(socket.AF_INET, 10, 0)
    domain = s.getsockopt(socket.SOL_SOCKET, 39)  # SO_DOMAIN
    s.close()
    assert domain == 17, domain
    return domain


attempt(payload)
