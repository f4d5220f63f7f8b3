"""Use a third-party package that reads its own data files.

The package directory comes from APP_LIBS (a directory outside the interpreter's site-packages,
put on sys.path by the program, as a plug-in directory would be).
"""

import os
import sys

sys.path.insert(0, os.environ["APP_LIBS"])

import tinyfmt

print(tinyfmt.banner("learned"))
