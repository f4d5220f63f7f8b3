# rule: expose-ro=.
# rule: python-import=socket
# needs: root
# expect: api PermissionError

"""Objective: call sethostname without the privileges right (same name: harmless).
"""

from _harness import attempt


def payload():
    import socket
    name = socket.gethostname()
    socket.sethostname(name)
    return name


attempt(payload)
