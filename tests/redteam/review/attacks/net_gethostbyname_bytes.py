# rule: expose-ro=.
# rule: python-import=socket
# needs: hosts-name
# expect: net ConnectionRefusedError

"""Objective: resolve a host name that no net= rule covers (SPEC 2.4: refused before any query leaves), given as bytes.
"""

from _harness import attempt


def payload():
    import socket
    name = open('name.txt').read().strip().encode()
    return socket.gethostbyname(name)


attempt(payload)
