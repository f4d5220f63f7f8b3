"""Read a file outside every exposure with a child process (/bin/cat).
argv: SECRET_PATH SECRET_TEXT"""

import subprocess
import sys
from _verdict import errno_from_message, report

proc = subprocess.run(["/bin/cat", sys.argv[1]], capture_output=True, text=True, timeout=30)
reached = proc.returncode == 0 and sys.argv[2] in proc.stdout
report(
    "read_child",
    reached,
    None if reached else errno_from_message(proc.stderr),
    proc.stdout if reached else f"exit {proc.returncode}: {proc.stderr}",
)
