# rule: expose-ro=.
# rule: python-import=socket
# needs: hosts-name
# expect: net ConnectionRefusedError

"""Objective: resolve a host name no net= rule covers with gethostbyname_ex, given as bytes.
"""

from _harness import attempt


def payload():
    import socket
    name = open('name.txt').read().strip().encode()
    return socket.gethostbyname_ex(name)


attempt(payload)
