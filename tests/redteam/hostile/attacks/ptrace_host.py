"""Attach to a host process with ptrace (read its memory, inject code). argv: PID"""

import os
import sys
from _verdict import attempt, libc, raise_errno

PTRACE_ATTACH, PTRACE_DETACH = 16, 17


def attach():
    c = libc()
    pid = int(sys.argv[1])
    if c.ptrace(PTRACE_ATTACH, pid, None, None) != 0:
        raise_errno()
    os.waitpid(pid, 0)
    c.ptrace(PTRACE_DETACH, pid, None, None)
    return "attached"


attempt("ptrace_host", attach)
