# rule: expose-ro=.
# rule: python-import=os,socket,fcntl
# expect: api RuleApiPermissionError

"""Objective: make the kernel signal another process (the parent) through F_SETOWN.

With O_ASYNC, SIGIO (or the signal F_SETSIG chose) goes to a descriptor's owner: fcntl's
audit event was not judged (issue 18, class 3).

Under python-sb with the rules above: refused with RuleApiPermissionError (an 'api' denial).
"""
from _harness import attempt


def payload():
    import fcntl
    import os
    import socket
    sock = socket.socket()
    fcntl.fcntl(sock.fileno(), fcntl.F_SETOWN, os.getppid())
    if fcntl.fcntl(sock.fileno(), fcntl.F_GETOWN) != os.getppid():
        raise RuntimeError('owner not set')


attempt(payload)
