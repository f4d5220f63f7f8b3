"""Shared by the attack programs: run one attempt and print its JSON verdict on stdout.

A verdict is ``{"objective", "reached", "errno", "detail"}``: ``reached`` is true when the
attack got what it wanted (the secret, a write, a signal delivered, a connection); ``errno`` is
the symbolic error that stopped it (``EACCES``, ``EPERM``, ...) or None.
"""

import errno
import json
import os
import sys


def report(objective, reached, err=None, detail=""):
    name = errno.errorcode.get(err, str(err)) if err is not None else None
    print(
        json.dumps(
            {"objective": objective, "reached": reached, "errno": name, "detail": str(detail)[:500]}
        ),
        flush=True,
    )


def attempt(objective, action, secret=None):
    """Call ``action()``; reached when it returns (and its result contains ``secret``)."""
    try:
        result = action()
    except OSError as exc:
        report(objective, False, exc.errno, exc)
        return
    if secret is not None:
        text = result.decode(errors="replace") if isinstance(result, bytes) else str(result)
        report(objective, secret in text, None, text)
    else:
        report(objective, True, None, result)


def errno_from_message(text):
    """The errno whose strerror() a C tool printed (``cat: x: Permission denied``)."""
    for code in (errno.EACCES, errno.EPERM, errno.ENOENT, errno.EXDEV, errno.ENOSYS):
        if os.strerror(code) in text:
            return code
    return None


def libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def raise_errno():
    import ctypes

    err = ctypes.get_errno()
    raise OSError(err, os.strerror(err))


if __name__ == "__main__":
    sys.exit("a helper module, not an attack")
