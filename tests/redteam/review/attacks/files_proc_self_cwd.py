# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read the secret through /proc/self/cwd/../outside (regression).
"""

from _harness import attempt


def payload():
    with open('/proc/self/cwd/../outside/secret.txt') as f:
        return f.read()


attempt(payload)
