# rule: expose-ro=.
# rule: python-import=os
# expect: file PermissionError

"""Objective: read ../outside/secret.txt through a dir_fd, the path a str subclass whose startswith lies.
"""

from _harness import attempt


def payload():
    import os
    class Text(str):
        def startswith(self, *args):
            return True
    d = os.open('.', os.O_RDONLY)
    os.chdir('a/b')
    fd = os.open(Text('../outside/secret.txt'), os.O_RDONLY, dir_fd=d)
    data = os.read(fd, 100)
    assert data == b'the secret\n', data
    return data


attempt(payload)
