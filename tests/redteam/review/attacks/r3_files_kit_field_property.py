# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt with the unwrapped ``posix.open`` and a ``dir_fd``
(the ``open`` event carries no ``dir_fd``: the guard judges the path against the current
directory, the kernel opens it against the descriptor). No rule but the file exposure.

1. ``pysandboxes.guard.kit.Kit`` (the record of C primitives captured at arm time) reads its
   fields through ``property`` objects in its class dict. ``wrappers.exact_text(kit, path)``,
   which every wrapper's ``before`` calls inside the hidden generator, reads ``kit.type``,
   ``kit.str_exact``... at run time. ``Kit.str_exact = property(...)`` raises no audit event
   in CPython 3.11 (class attributes never do), so ``on_setattr``'s protection of python-sb's
   classes never sees it.
2. ``posix.open('data.txt', ...)``: ``rewrite_dir_fd`` calls ``exact_text``, which runs the
   program's property getter while the generator still holds the original (``fn`` in
   ``wrappers.hide``'s holder; ``box`` in ``hide_reentrant``'s one-shot generator). A
   generator frame kept from earlier (``sys._getframe()`` with no guard frame among its
   callers: allowed) is resumed there and walks ``f_back`` (no audit event) to it.
3. With the original: a descriptor of the project directory, ``chdir('a/b')`` (exposed), and
   ``open('../outside/secret.txt', dir_fd=project)``: judged as ``project/a/outside/...``
   (exposed), opened as ``project/../outside/secret.txt``.
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
                    found.append(names['fn'])  # wrappers.hide's holder
                    break
                if names.get('box') and 'before' in names:
                    found.append(names['box'][0])  # native_files.hide_reentrant's one-shot
                    break
                frame = frame.f_back

    walker = spy()
    next(walker)

    try:
        from pysandboxes.guard.kit import Kit
    except ImportError:  # plain python3 (the control)
        Kit = None
    if Kit is not None:
        field = Kit.__dict__['str_exact']

        def getter(kit):
            if not found:
                next(walker)
            return field.__get__(kit)

        Kit.str_exact = property(getter)
        try:
            posix.close(posix.open('data.txt', posix.O_RDONLY))
        finally:
            Kit.str_exact = field
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
