# rule: expose-ro=.
# rule: python-import=os
# expect: file PermissionError

"""Objective: make the open cache answer for a relative path after fchdir (regression).
"""

from _harness import attempt


def payload():
    import os
    d = os.open('.', os.O_RDONLY)
    os.chdir('a/b')
    try:
        open('../outside/secret.txt').close()  # judged from a/b: a path in the project
    except FileNotFoundError:
        pass
    os.fchdir(d)
    with open('../outside/secret.txt') as f:
        return f.read()


attempt(payload)
