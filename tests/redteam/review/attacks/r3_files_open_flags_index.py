# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt with the unwrapped ``posix.open`` and a ``dir_fd``
(the ``open`` event carries no ``dir_fd``: the guard judges the path against the current
directory, the kernel opens it against the descriptor). No rule but the file exposure.

1. ``posix.open`` is wrapped (``rewrite_dir_fd`` in a ``wrappers.hide()`` generator) for its
   ``dir_fd``; the path is made an exact ``str``, but the *flags* go in as given, and the
   original (Argument Clinic ``int``) calls their ``__index__`` -- program code, with the
   holder generator's frame as its caller, before any audit event.
2. A generator frame kept from earlier (``sys._getframe()`` with no guard frame among its
   callers: allowed) is resumed from ``__index__``: its ``f_back`` chain (no audit event)
   reaches the holder, whose ``f_locals`` (no event) hold ``fn``, the original.
3. With the original: a descriptor of the project directory, ``chdir('a/b')`` (exposed), and
   ``open('../outside/secret.txt', dir_fd=project)``: judged as ``project/a/outside/...``
   (exposed), opened as ``project/../outside/secret.txt``.

A bypass of ``bced74d`` (``hide()``'s holder kept ``fn`` in its frame while calling it);
refused once every wrapper pops the original from a list just before the call.
"""

from _harness import attempt


def payload():
    import sys

    posix = sys.modules['posix']
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

    class Flags:
        def __index__(self):
            if not found:
                next(walker)
            return posix.O_RDONLY

    posix.close(posix.open('data.txt', Flags()))
    original = found[0] if found else posix.open  # plain python3: no wrapper
    project = posix.open('.', posix.O_RDONLY)
    posix.chdir('a/b')
    try:
        fd = original('../outside/secret.txt', posix.O_RDONLY, dir_fd=project)
    finally:
        posix.chdir('../..')
    data = posix.read(fd, 100).decode()
    posix.close(fd)
    assert data == 'the secret\n', data
    return data, len(found)


attempt(payload)
