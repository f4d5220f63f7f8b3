# rule: expose-ro=.
# rule: python-import=os
# expect: import ModuleNotFoundError

"""Objective: read ../outside/secret.txt through a dir_fd with the open of a fresh, unwrapped posix module.
"""

from _harness import attempt


def payload():
    import _imp, sys
    fresh = _imp.create_builtin(sys.modules['posix'].__spec__)
    assert fresh is not sys.modules['posix']
    import os
    d = os.open('.', os.O_RDONLY)
    os.chdir('a/b')
    fd = fresh.open('../outside/secret.txt', os.O_RDONLY, dir_fd=d)
    data = os.read(fd, 100)
    assert data == b'the secret\n', data
    return data


attempt(payload)
