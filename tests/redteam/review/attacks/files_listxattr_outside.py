# rule: expose-ro=.
# rule: python-import=os
# expect: file PermissionError

"""Objective: read the extended attributes of ../outside/secret.txt (not exposed).
"""

from _harness import attempt


def payload():
    import os
    return os.listxattr('../outside/secret.txt')


attempt(payload)
