"""Leave a set-user-ID (or set-group-ID) executable in a writable exposure, for whoever runs it
on the host after the run. argv: HOW DIRECTORY, HOW one of ``chmod`` (4755), ``setgid``
(chmod 2755), ``fchmod``, ``chmodat`` (fchmodat through a directory descriptor), ``create``
(open with O_CREAT and mode 4755), ``mknod`` (a regular file made by mknod with mode 4755).
Reached when the file left there has the bit."""

import os
import stat
import sys
from _verdict import attempt

HOW, DIRECTORY = sys.argv[1], sys.argv[2]
TARGET = os.path.join(DIRECTORY, "escalate")
PROGRAM = b"#!/bin/sh\nid\n"


def plant():
    os.umask(0o022)
    if HOW == "create":
        fd = os.open(TARGET, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o4755)
        os.write(fd, PROGRAM)
        os.close(fd)
    elif HOW == "mknod":
        os.mknod(TARGET, stat.S_IFREG | 0o4755)
    else:
        with open(TARGET, "wb") as handle:
            handle.write(PROGRAM)
        if HOW == "chmod":
            os.chmod(TARGET, 0o4755)
        elif HOW == "setgid":
            os.chmod(TARGET, 0o2755)
        elif HOW == "fchmod":
            fd = os.open(TARGET, os.O_RDONLY)
            os.fchmod(fd, 0o4755)
            os.close(fd)
        elif HOW == "chmodat":
            fd = os.open(DIRECTORY, os.O_RDONLY | os.O_DIRECTORY)
            os.chmod("escalate", 0o4755, dir_fd=fd)
            os.close(fd)
        else:
            raise SystemExit(f"unknown way {HOW}")
    mode = os.stat(TARGET).st_mode
    return "SETID " + oct(mode) if mode & (stat.S_ISUID | stat.S_ISGID) else oct(mode)


attempt("setuid_" + HOW, plant, secret="SETID")
