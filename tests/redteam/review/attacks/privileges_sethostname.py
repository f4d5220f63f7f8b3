# rule: expose-ro=.
# rule: python-import=socket
# needs: root
# expect: api PermissionError
# bypass: the socket.sethostname audit event is not handled and not in the registry: a root program without privileges changes the host name of the host (the attack sets the current name again: no change)

"""Objective: call sethostname without the privileges right (same name: harmless).
"""

from _harness import attempt


def payload():
    import socket
    name = socket.gethostname()
    socket.sethostname(name)
    return name


attempt(payload)
