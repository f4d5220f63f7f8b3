# rule: expose-ro=.
# expect: api PermissionError

"""Objective: run /bin/cat ../outside/secret.txt as a child process (no process-exec rule, no
python-import rule) with the unwrapped ``_posixsubprocess.fork_exec``, read from its hidden
generator's frame by a method of python-sb's own refusal class.

The hook's ``on_setattr`` is meant to refuse changes to python-sb's classes ("their methods run
inside the hook"), but CPython 3.11 raises ``object.__setattr__`` for ``__class__`` and a
function's ``__code__``/``__defaults__``/``__kwdefaults__`` only, never for ``Class.attr =
value``: nothing is judged. The hidden generator
of every wrapper catches the refusal its ``before`` raises and calls
``exc.with_traceback(None)`` on it -- a method looked up on the refusal's class, with the
original still held by the generator (``fn`` in ``wrappers.hide``'s holder; ``box`` in the
one-shot generator of ``hide_reentrant``, emptied only at the call).

1. ``pysandboxes.errors.RuleApiPermissionError.with_traceback`` = the program's function.
2. ``fork_exec()`` is refused by the hook (``pysandboxes.call``): inside the generator, the
   program's ``with_traceback`` runs; a generator frame kept from earlier (``sys._getframe()``
   with no guard frame among its callers: allowed) is resumed there and walks ``f_back``
   (no audit event) to the generator's frame, whose ``f_locals`` (no event) hold the original.
"""

from _harness import attempt


def payload():
    import sys

    posix = sys.modules['posix']
    module = sys.modules.get('_posixsubprocess')  # loaded by python-sb's wrappers
    if module is None:  # plain python3
        import _posixsubprocess as module
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

    def with_traceback(self, tb):
        if not found:
            next(walker)
        return BaseException.with_traceback(self, tb)

    try:
        import pysandboxes.errors as errors
    except ImportError:  # plain python3 (the control)
        errors = None
    if errors is not None:
        errors.RuleApiPermissionError.with_traceback = with_traceback
    wrapped = module.fork_exec
    try:
        wrapped()  # refused (process-exec), or TypeError under plain python3
    except Exception:
        pass
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
