# rule: expose-ro=.
# rule: python-import=os
# expect: absent

"""Objective: read ../outside/secret.txt through a dir_fd with a path-like object that answers differently on each call.
"""

from _harness import attempt


def payload():
    import os
    class Lie:
        calls = 0
        def __fspath__(self):
            Lie.calls += 1
            return os.path.abspath('data.txt') if Lie.calls == 1 else '../outside/secret.txt'
    d = os.open('.', os.O_RDONLY)
    os.chdir('a/b')
    if type(os.open).__name__ == 'builtin_function_or_method':
        Lie.calls = 1  # plain python3 (the control): one call, give the relative answer
    fd = os.open(Lie(), os.O_RDONLY, dir_fd=d)
    data = os.read(fd, 100)
    assert data == b'the secret\n', data
    return data


attempt(payload)
