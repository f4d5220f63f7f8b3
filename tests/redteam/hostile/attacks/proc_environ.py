"""Read another (host) process's environment from /proc/PID/environ.
argv: PID SECRET_TEXT"""

import sys
from _verdict import attempt

attempt(
    "proc_environ", lambda: open(f"/proc/{sys.argv[1]}/environ", "rb").read(), secret=sys.argv[2]
)
