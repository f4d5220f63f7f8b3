"""Find a secret of the launching environment in the program's own environment.
argv: VARIABLE_NAME SECRET_TEXT"""

import os
import sys
from _verdict import report

own = os.environ.get(sys.argv[1])
with open("/proc/self/environ", "rb") as f:
    raw = f.read().decode(errors="replace")
reached = own is not None or sys.argv[2] in raw
report(
    "env_secret", reached, None, f"os.environ: {own!r}; in /proc/self/environ: {sys.argv[2] in raw}"
)
