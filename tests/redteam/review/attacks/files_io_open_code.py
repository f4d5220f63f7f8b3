# rule: expose-ro=.
# rule: python-import=io
# expect: file PermissionError

"""Objective: read ../outside/secret.txt with io.open_code (regression).
"""

from _harness import attempt


def payload():
    import io
    with io.open_code('../outside/secret.txt') as f:
        return f.read()


attempt(payload)
