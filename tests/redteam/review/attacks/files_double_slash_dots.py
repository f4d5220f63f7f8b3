# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read the secret with '//' and './' in the path (regression).
"""

from _harness import attempt


def payload():
    with open('a//.//..//.//../outside//secret.txt') as f:
        return f.read()


attempt(payload)
