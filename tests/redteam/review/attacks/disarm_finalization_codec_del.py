# rule: expose-ro=.
# rule: python-import=_codecs,posix
# expect: absent

"""Objective: read ../outside/secret.txt from a __del__ that runs while the interpreter shuts
     down. The payload only arms it and reports 'failed'; the __del__ prints a final RESULT line
     ('reached') when the read works (the test reads the last RESULT line).
"""

from _harness import attempt


def payload():
    import _codecs, posix
    class Late:
        def __init__(self):
            self.open, self.read, self.write = posix.open, posix.read, posix.write
        def __call__(self, name):
            return None
        def __del__(self):
            try:
                fd = self.open('../outside/secret.txt', 0)
                if self.read(fd, 100) == b'the secret\n':
                    self.write(1, b'RESULT {"result": "reached", "detail": "read at shutdown"}\n')
            except BaseException:
                pass
    _codecs.register(Late())
    raise RuntimeError('armed: the objective is reached at shutdown, or not at all')


attempt(payload)
