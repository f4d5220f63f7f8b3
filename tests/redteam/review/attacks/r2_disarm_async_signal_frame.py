# rule: expose-ro=.
# rule: python-import=socket
# rule: python-import=signal
# rule: python-import=fcntl
# rule: python-import=os
# rule: net=ALLOW|UDP|127.0.0.1|*|OUT
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, with no
program code inside the hook: an asynchronous signal lands while the hook runs.

A UDP socket in ``O_ASYNC`` mode gets ``SIGIO`` when the echo comes back (from another thread
of another process, at a time the program does not choose). Meanwhile the program keeps the
hook busy (``sys.audit`` of an ``open`` event of an exposed file: the hook's Python code is
almost all the time spent). CPython runs the Python signal handler at the next check of the
eval loop -- often inside the hook's own Python code -- and passes it the interrupted frame
(no audit event): ``f_back`` and ``f_locals`` (no events) reach ``_hook_body``'s ``get``, the
bound ``dict.get`` of the dispatch table. The docs say ``sys._getframe`` is refused for a
signal handler running while the hook runs; the handler's own ``frame`` argument is not.
"""

from _harness import attempt


def payload():
    import fcntl
    import os
    import signal
    import socket
    import sys

    found = []
    hits = [0]

    def handler(signum, frame):
        hits[0] += 1
        while frame is not None:
            names = frame.f_locals
            if 'get' in names and 'strip' in names:
                found.append(names['get'])
            frame = frame.f_back

    guarded = type(socket.socket.connect).__name__ == 'function'  # python-sb's pre-check
    signal.signal(signal.SIGIO, handler)
    port = int(open('udp_port.txt').read())
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    fd = sock.fileno()
    fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid())
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC | os.O_NONBLOCK)
    for _ in range(3000):
        before = hits[0]
        sock.sendto(b'x', ('127.0.0.1', port))
        spins = 0
        while hits[0] == before and spins < 200000:
            sys.audit('open', 'udp_port.txt', 'r', 0)
            spins += 1
        try:
            while True:
                sock.recv(16)
        except BlockingIOError:
            pass
        if found or (not guarded and hits[0] >= 10):
            break
    signal.signal(signal.SIGIO, signal.SIG_IGN)
    sock.close()
    for get in found[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return hits[0], data


attempt(payload)
