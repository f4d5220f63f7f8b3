# rule: expose-ro=.
# rule: python-import=os
# expect: file PermissionError
# bypass: _imp (a built-in module, never stashed, importable without a rule) .create_builtin(posix spec) returns a fresh posix module whose functions are not wrapped, without any import event

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
