# rule: expose-ro=.
# rule: python-import=os
# expect: file PermissionError

"""Objective: read the secret through /dev/fd/N/.. of a directory descriptor (regression).
"""

from _harness import attempt


def payload():
    import os
    d = os.open('a', os.O_RDONLY)
    with open(f'/dev/fd/{d}/../../outside/secret.txt') as f:
        return f.read()


attempt(payload)
