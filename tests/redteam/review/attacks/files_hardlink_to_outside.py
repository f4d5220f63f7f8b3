# rule: expose-rw=.
# rule: python-import=os
# expect: file PermissionError

"""Objective: hard-link the secret into the project and read it (regression).
"""

from _harness import attempt


def payload():
    import os
    os.link('../outside/secret.txt', 'copy.txt')
    return open('copy.txt').read()


attempt(payload)
