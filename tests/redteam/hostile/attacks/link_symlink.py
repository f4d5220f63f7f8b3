"""Plant a symlink to a secret inside a writable exposure, then read through it.
argv: SECRET_PATH SECRET_TEXT WRITABLE_DIR"""

import os
import sys
from _verdict import attempt


def steal():
    link = os.path.join(sys.argv[3], "innocent-link.txt")
    os.symlink(sys.argv[1], link)
    return open(link).read()


attempt("link_symlink", steal, secret=sys.argv[2])
