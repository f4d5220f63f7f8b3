# rule: expose-ro=.
# rule: python-import=readline
# expect: file PermissionError

"""Objective: read ../outside/secret.txt as a readline history file, with the unwrapped C
``read_history_file`` dug out of the wrapper's own frame while the wrapper calls the
program's ``__fspath__``.

1. A generator takes its own frame with ``sys._getframe()`` when the program first runs it
   (no guard frame among its callers: allowed) and keeps it.
2. ``readline.read_history_file(path)`` gets a path-like object: the wrapper's ``before``
   calls its ``__fspath__`` once (to judge the exact text), from inside ``hide()``'s holder
   generator, whose frame has the original C function ``fn`` among its free variables.
3. ``__fspath__`` resumes the generator: the kept frame's ``f_back`` chain (no audit event)
   reaches the holder frame, and its ``f_locals`` (no event) hold ``fn``.
"""

from _harness import attempt


def payload():
    import readline
    import sys

    found = []

    def spy():
        me = sys._getframe()
        while True:
            yield
            frame = me.f_back
            while frame is not None:
                names = frame.f_locals
                if 'fn' in names and 'before' in names:
                    found.append(names['fn'])
                    break
                frame = frame.f_back

    walker = spy()
    next(walker)

    class Path:
        def __fspath__(self):
            next(walker)
            return 'data.txt'

    readline.clear_history()
    readline.read_history_file(Path())  # data.txt: exposed, allowed
    original = found[0] if found else readline.read_history_file  # plain python3: no wrapper
    readline.clear_history()
    original('../outside/secret.txt')
    line = readline.get_history_item(1)
    assert line == 'the secret', line
    return line


attempt(payload)
