# rule: expose-ro=.
# rule: python-import=pathlib,os
# expect: file PermissionError

"""Objective: a pathlib subclass whose _str read lies to __str__ but not to the slot (regression).
"""

from _harness import attempt


def payload():
    import os, pathlib
    class P(pathlib.PosixPath):
        def __getattribute__(self, name):
            if name == '_str':
                return '../outside/secret.txt'
            return object.__getattribute__(self, name)
    p = P('data.txt')
    pathlib.PurePath.__dict__['_str'].__set__(p, 'data.txt')
    fd = os.open(p, os.O_RDONLY)
    return os.read(fd, 100)


attempt(payload)
