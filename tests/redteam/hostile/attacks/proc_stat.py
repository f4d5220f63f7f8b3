"""See a host process: read /proc/PID/stat of a process outside the sandbox (world-readable:
no ptrace check, so only a /proc of the sandbox's own PID namespace hides it).
argv: PID"""

import sys
from _verdict import attempt

attempt("proc_stat", lambda: open(f"/proc/{sys.argv[1]}/stat").read(), secret=sys.argv[1] + " (")
