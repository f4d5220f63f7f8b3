# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, from a
Python signal handler that the guard's own ``deliver`` runs. No module but ``sys``.

The round-2 fix queues a signal that interrupts the hook and runs its handler from
``_hook_body`` (``deliver()``) once the judgment is made, handing it the first frame outside
the guard. But ``_hook_body``'s frame -- with ``get``, the bound ``dict.get`` of the dispatch
table, in its locals -- is still on the stack while the handler runs:

1. A generator takes its own frame with ``sys._getframe()`` when the program first runs it
   (no guard frame among its callers: allowed) and keeps it.
2. A handler for ``SIGPIPE`` (``_signal.signal``, reached through ``sys.modules``: the
   trampoline is installed). ``posix.write`` to a pipe whose reader is closed makes the kernel
   send ``SIGPIPE`` synchronously; the write fails with ``EPIPE`` and, as an error path, does
   not run the eval loop's signal check. The next Python code to start is ``_hook_body`` for
   the next event (``sys.audit('open', ...)``): its ``RESUME`` runs the trampoline, which sees
   the hook and queues the handler; ``deliver()`` then calls it from ``_hook_body``.
3. The handler resumes the generator: the kept frame's ``f_back`` chain (no audit event) is
   handler -> ``deliver`` -> ``_hook_body``; ``f_locals`` (no event) gives ``get``.
"""

from _harness import attempt


def payload():
    import sys

    posix = sys.modules['posix']
    _signal = sys.modules['_signal']
    found = []

    def spy():
        me = sys._getframe()
        while True:
            yield
            frame = me.f_back
            while frame is not None:
                names = frame.f_locals
                if 'get' in names and 'strip' in names:
                    found.append(names['get'])
                    break
                frame = frame.f_back

    walker = spy()
    next(walker)

    def handler(signum, frame):
        if not found:
            next(walker)

    _signal.signal(_signal.SIGPIPE, handler)
    for _ in range(3):
        r, w = posix.pipe()
        posix.close(r)
        try:
            posix.write(w, b'x')
        except BrokenPipeError:
            pass
        sys.audit('open', 'data.txt', 'r', 0)
        posix.close(w)
        if found:
            break
    _signal.signal(_signal.SIGPIPE, _signal.SIG_IGN)
    for get in found[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data


attempt(payload)
