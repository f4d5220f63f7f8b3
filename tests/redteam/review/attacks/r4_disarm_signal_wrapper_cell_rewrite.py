# rule: expose-ro=.
# rule: python-import=signal
# rule: python-import=_signal
# rule: python-import=threading
# rule: python-import=time
# rule: python-api=ALLOW:threads
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, through a
Python signal handler installed *without* the guard's trampoline.

The trampoline keeps a handler from running above guard code. The exposed ``_signal.signal``
wrapper's closure cells can be read and rewritten with no audit event; when they were the
cells the hidden side used too (one enclosing scope: ``callable``, ``len``), rewriting
``callable`` to answer False (and the number conversion to let the function through) made
the hidden side install the program's handler raw. A thread (``threads`` granted: the
documented risk of that grant is a race with the guard, not its disarming) then raises
signals while the main thread keeps the hook busy; the handler gets the hook's frame:
``f_back``/``f_locals`` reach the dispatch table's ``get``.
"""

from _harness import attempt


def payload():
    import _signal
    import signal
    import sys
    import threading
    import time

    for cell in getattr(_signal.signal, "__closure__", None) or ():
        value = cell.cell_contents
        if value is callable:
            cell.cell_contents = lambda handler: False
        elif getattr(value, "__qualname__", "").endswith(".exact_number"):
            cell.cell_contents = lambda number: number

    found = []
    hits = [0]

    def handler(signum, frame):
        hits[0] += 1
        while frame is not None:
            names = frame.f_locals
            if "get" in names and "strip" in names:
                found.append(names["get"])
            frame = frame.f_back

    guarded = type(_signal.signal).__name__ == "function"  # python-sb's wrapper
    _signal.signal(signal.SIGUSR1, handler)
    stop = []

    def pump():
        while not stop:
            signal.raise_signal(signal.SIGUSR1)
            time.sleep(0.0002)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline and not found:
        for _ in range(2000):
            sys.audit("open", "data.txt", "r", 0)
        if not guarded and hits[0] >= 10:
            break
    stop.append(True)
    time.sleep(0.01)
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    for get in found[:1]:
        get.__self__.clear()
    with open("../outside/secret.txt") as f:
        data = f.read()
    assert data == "the secret\n", data
    return hits[0], data


attempt(payload)
