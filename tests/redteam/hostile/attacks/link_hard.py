"""Plant a hard link to a secret inside a writable exposure, then read through it.
argv: SECRET_PATH SECRET_TEXT WRITABLE_DIR"""

import os
import sys
from _verdict import attempt


def steal():
    link = os.path.join(sys.argv[3], "innocent-hardlink.txt")
    os.link(sys.argv[1], link)
    return open(link).read()


attempt("link_hard", steal, secret=sys.argv[2])
