# rule: expose-rw=.
# rule: python-import=os,signal
# rule: python-api=ALLOW:process-control
# expect: file RulePermissionError

"""Objective: read a file outside the exposure through the window between the judgment of a
path and its use (issue 18, class 6): open() of a FIFO blocks, a timer's signal interrupts it,
CPython runs the Python handler and retries the system call on the same relative path -- and
the handler has meanwhile changed the current directory to where the secret is.

Under python-sb with the rules above (signals granted): the path is judged again after the
handler; the retried open() fails with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import os
    import signal
    if os.path.lexists('secret.txt'):
        os.remove('secret.txt')  # left by the control run
    os.mkfifo('secret.txt')  # in the writable project: judged, allowed

    def swap(signum, frame):
        os.chdir('../outside')  # os.chdir is not judged (the next open is)

    signal.signal(signal.SIGALRM, swap)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        with open('secret.txt') as handle:  # blocks on the FIFO until the signal
            text = handle.read()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if 'the secret' not in text:
        raise RuntimeError(text)


attempt(payload)
