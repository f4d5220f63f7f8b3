# rule: expose-ro=.
# rule: python-import=socket
# needs: root
# expect: net ConnectionRefusedError

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
