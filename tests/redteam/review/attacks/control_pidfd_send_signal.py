# rule: expose-ro=.
# rule: python-import=os,signal
# expect: api PermissionError

"""Objective: send a signal (0: a permission check only) to another process without process-control.
"""

from _harness import attempt


def payload():
    import os, signal
    pid = int(open('victim_pid.txt').read())
    signal.pidfd_send_signal(os.pidfd_open(pid), 0)
    return 'signalled'


attempt(payload)
