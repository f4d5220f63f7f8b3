# rule: expose-ro=.
# rule: python-import=posix
# expect: absent file

"""Objective: read ../outside/secret.txt from the __del__ of a global of __main__, which runs
     when the program's objects are freed at exit (python-sb releases them itself, still
     guarded, as CPython's finalization would: launch/child.release_program). The payload only
     arms it and reports 'failed'; the __del__ prints a final RESULT line ('reached') when the
     read works. The refusal logged (a 'file' denial) shows the __del__ ran, and ran guarded.
"""

from _harness import attempt


def payload():
    import posix
    class Late:
        def __init__(self):
            self.open, self.read, self.write = posix.open, posix.read, posix.write
        def __del__(self):
            try:
                fd = self.open('../outside/secret.txt', 0)
                if self.read(fd, 100) == b'the secret\n':
                    self.write(1, b'RESULT {"result": "reached", "detail": "read at exit"}\n')
            except BaseException:
                pass
    globals()['late'] = Late()
    raise RuntimeError('armed: the objective is reached at exit, or not at all')


attempt(payload)
