# rule: expose-ro=.
# rule: python-import=signal,threading
# expect: api PermissionError

"""Objective: signal.pthread_kill of the main thread (signal 0, harmless) without process-control (regression).
"""

from _harness import attempt


def payload():
    import signal, threading
    signal.pthread_kill(threading.main_thread().ident, 0)
    return 'sent'


attempt(payload)
