"""Create a file where no rule grants writing (a read-only exposure, host /tmp).
argv: OBJECTIVE TARGET_PATH"""

import os
import sys
from _verdict import attempt


def write():
    with open(sys.argv[2], "x") as f:
        f.write("written by an attack\n")
    return os.path.exists(sys.argv[2])


attempt(sys.argv[1], write)
