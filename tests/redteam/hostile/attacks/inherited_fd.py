"""Use a descriptor inherited from whoever started python-sb: a file outside every exposure is
read from it, a directory lets openat() reach a file below it (outside the sandbox's mount
namespace too). argv: NAME SECRET_TEXT (NAME: the file to open below an inherited directory).
Reached when the secret was read through some descriptor above 2."""

import os
import stat
import sys
from _verdict import attempt

NAME, SECRET = sys.argv[1], sys.argv[2]


def steal():
    seen = []
    for entry in sorted(os.listdir("/proc/self/fd"), key=int):
        fd = int(entry)
        if fd <= 2:
            continue
        try:
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                inner = os.open(NAME, os.O_RDONLY, dir_fd=fd)
                data = os.read(inner, 4096)
                os.close(inner)
            else:
                data = os.pread(fd, 4096, 0)
        except OSError as exc:
            seen.append(f"{fd}: {exc}")
            continue
        text = data.decode(errors="replace")
        if SECRET in text:
            return f"{text} (through descriptor {fd})"
        seen.append(f"{fd}: no secret")
    return f"descriptors above 2: {seen or 'none'}"


attempt("inherited_fd", steal, secret=SECRET)
