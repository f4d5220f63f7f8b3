"""Send SIGTERM to a host process (outside the sandbox). argv: PID"""

import os
import signal
import sys
from _verdict import attempt

attempt("signal_host", lambda: os.kill(int(sys.argv[1]), signal.SIGTERM))
