"""Read a file outside every exposure with plain open(). argv: SECRET_PATH SECRET_TEXT"""

import sys
from _verdict import attempt

attempt("read_open", lambda: open(sys.argv[1]).read(), secret=sys.argv[2])
