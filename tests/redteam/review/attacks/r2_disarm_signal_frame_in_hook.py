# rule: expose-ro=.
# rule: python-import=socket
# rule: python-import=signal
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table.

Two steps, each a hole of its own:

1. ``socket.socket.connect`` (the name pre-check) is a plain function of
   ``pysandboxes.guard.network``; its ``__globals__`` (no audit event) is that module's
   namespace, where the hook's network handlers look up builtins at run time
   (``isinstance`` in ``on_sockaddr``): a name put there shadows the builtin, so program code
   runs *inside* the hook.
2. From there, ``signal.raise_signal`` runs a Python signal handler at once, and CPython hands
   it the interrupted frame (no audit event, unlike ``sys._getframe``): its ``f_back`` chain
   (no event) reaches ``_hook_body``, whose ``f_locals`` (no event) hold ``get``, the bound
   ``dict.get`` of the dispatch table; ``get.__self__.clear()`` leaves the hook nothing to do.
"""

from _harness import attempt


def payload():
    import signal
    import socket

    found = []

    def handler(signum, frame):
        while frame is not None:
            names = frame.f_locals
            if 'get' in names and 'strip' in names:
                found.append(names['get'])
            frame = frame.f_back

    signal.signal(signal.SIGUSR1, handler)
    sock = socket.socket()
    scope = getattr(socket.socket.connect, '__globals__', None)
    if scope is not None:  # python-sb: the guard's network module
        real = isinstance

        def spy(obj, cls):
            signal.raise_signal(signal.SIGUSR1)
            return real(obj, cls)

        scope['isinstance'] = spy
        try:
            sock.connect(('localhost', 9))
        except OSError:
            pass
        del scope['isinstance']
        for get in found:
            get.__self__.clear()
    sock.close()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data


attempt(payload)
