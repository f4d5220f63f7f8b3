"""Change the permissions of a file outside every exposure (make a private file world-readable).
argv: SECRET_PATH"""

import os
import stat
import sys
from _verdict import attempt


def chmod():
    os.chmod(sys.argv[1], 0o666)
    return stat.filemode(os.stat(sys.argv[1]).st_mode)


attempt("chmod_outside", chmod)
