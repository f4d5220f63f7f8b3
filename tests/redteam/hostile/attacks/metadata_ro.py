"""Change the metadata of a file in a read-only exposure (make a rule file world-writable, set a
file's times back, tag it with an extended attribute). argv: HOW PATH, HOW one of ``chmod``
(0666), ``utime`` (to 1 000 000 000), ``xattr`` (user.pysb). Reached when the change reads back."""

import os
import sys
from _verdict import attempt

HOW, PATH = sys.argv[1], sys.argv[2]


def change():
    if HOW == "chmod":
        os.chmod(PATH, 0o666)
        return "CHANGED" if os.stat(PATH).st_mode & 0o777 == 0o666 else "unchanged"
    if HOW == "utime":
        os.utime(PATH, (1_000_000_000, 1_000_000_000))
        return "CHANGED" if int(os.stat(PATH).st_mtime) == 1_000_000_000 else "unchanged"
    if HOW == "xattr":
        os.setxattr(PATH, "user.pysb", b"planted")
        return "CHANGED" if os.getxattr(PATH, "user.pysb") == b"planted" else "unchanged"
    raise SystemExit(f"unknown way {HOW}")


attempt("metadata_ro_" + HOW, change, secret="CHANGED")
