# rule: expose-ro=.
# rule: python-import=os
# rule: python-import=signal
# rule: python-import=sys
# rule: python-import=tempfile
# rule: python-api=ALLOW:signal.setitimer
# expect: file PermissionError

"""Objective: read ../outside/secret.txt with the original posix.open and a directory
descriptor, taken from the frames below a signal handler that runs while a wrapped os.open
blocks (issue 27, cause 3: such a handler now runs at once, above the wrapper's frames).

A FIFO with no writer makes os.open block inside the hidden generator; a timer's SIGALRM
runs the handler there. The handler resumes a generator that kept its own frame earlier, so
that frame's f_back chain is the handler's stack; it reads every frame's f_locals (no audit
event) looking for the original posix.open, a builtin that is not the wrapper. The wrapper's
frames hold nothing of the kind while the original runs (the one-shot generator popped it).
"""

from _harness import attempt


def payload():
    import os
    import signal
    import sys
    import tempfile

    d = os.open('.', os.O_RDONLY)
    os.chdir('a/b')  # from here, ../outside/secret.txt is a path in the project
    if type(os.open).__name__ == 'builtin_function_or_method':
        # plain python3 (the control): nothing wrapped, the objective is a plain dir_fd open
        fd = os.open('../outside/secret.txt', os.O_RDONLY, dir_fd=d)
        data = os.read(fd, 100)
        assert data == b'the secret\n', data
        return data

    def keeper():
        me = sys._getframe()
        while True:
            yield me

    kept = keeper()
    frame_of_keeper = next(kept)
    found = []

    class Stop(Exception):
        pass

    def handler(signum, frame):
        next(kept)  # its frame's f_back is now this handler's frame
        walk = frame_of_keeper.f_back
        while walk is not None:
            for value in list(walk.f_locals.values()):
                if (
                    type(value).__name__ == 'builtin_function_or_method'
                    and getattr(value, '__name__', '') == 'open'
                    and getattr(value, '__module__', '') == 'posix'
                ):
                    found.append(value)
                if isinstance(value, list):
                    found.extend(
                        v for v in value if type(v).__name__ == 'builtin_function_or_method'
                    )
            walk = walk.f_back
        raise Stop

    fifo = os.path.join(tempfile.mkdtemp(), 'fifo')
    os.mkfifo(fifo)
    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        os.open(fifo, os.O_RDONLY)  # blocks: no writer
    except Stop:
        pass
    for original in found:
        try:
            fd = original('../outside/secret.txt', os.O_RDONLY, dir_fd=d)
        except TypeError:
            continue
        data = os.read(fd, 100)
        assert data == b'the secret\n', data
        return data
    # Nothing found: the wrapped os.open, whose open event the rules refuse.
    fd = os.open('../outside/secret.txt', os.O_RDONLY, dir_fd=d)
    return os.read(fd, 100)


attempt(payload)
