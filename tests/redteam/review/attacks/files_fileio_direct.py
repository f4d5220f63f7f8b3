# rule: expose-ro=.
# rule: python-import=_io
# expect: file PermissionError

"""Objective: read ../outside/secret.txt with _io.FileIO (regression).
"""

from _harness import attempt


def payload():
    import _io
    with _io.FileIO('../outside/secret.txt') as f:
        return f.read()


attempt(payload)
