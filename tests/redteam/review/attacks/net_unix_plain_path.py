# rule: expose-ro=.
# rule: python-import=socket
# expect: file PermissionError

"""Objective: connect to a Unix socket in a directory no rule exposes (plain path: regression).
"""

from _harness import attempt


def payload():
    import socket
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(open('usock.txt').read())
    data = s.recv(16)
    s.close()
    return data


attempt(payload)
