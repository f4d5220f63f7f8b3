# rule: expose-ro=.
# rule: python-import=os
# expect: file PermissionError

"""Objective: read the secret through /proc/self/fd/N/.. of a directory descriptor (regression).
"""

from _harness import attempt


def payload():
    import os
    d = os.open('.', os.O_RDONLY)
    with open(f'/proc/self/fd/{d}/../outside/secret.txt') as f:
        return f.read()


attempt(payload)
