"""The descriptors a sandboxed program starts with: the three standard streams and what the run
passes on purpose, nothing else (issue 23, class 4).

Whoever starts python-sb (a shell, an IDE, an agent's harness) may leave descriptors open
without close-on-exec: a file outside every exposure, a directory (``openat(fd, name)`` then
walks from it, outside the mount namespace of ``bwrap`` and ``unshare``), a socket. Inherited
by the program, each is a way around the rules that no enforcer sees, since the kernel checks
a path when it is opened, not a descriptor already open. :func:`close_inherited` closes them on
every path that starts the program (the launcher's ``exec``, the supervisor's and partial
mode's fork), before the provider's own steps, so the sandbox's setup processes (the
``unshare`` step, bubblewrap, the qemu relay) do not hold them either.

Standard library only, nothing imported: it runs in a forked child of a possibly threaded
parent, between ``fork`` and ``exec``.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable


def close_inherited(keep: Iterable[int]) -> None:
    """Close every descriptor above 2 except those in ``keep`` (what the run passes on
    purpose: the hand-over channel, the learning record, a provider's own data).

    ``os.closerange`` is CPython's ``close_range(2)`` where the system has it (Linux >= 5.9),
    with its own fallback; that fallback closes one number at a time, so the range stops at
    the highest descriptor open (listed in ``/proc/self/fd`` or ``/dev/fd``), or at the
    descriptor limit where neither lists them.
    """

    kept = sorted({fd for fd in keep if fd > 2})
    last = _highest_open()
    low = 3
    for fd in (*kept, last + 1):
        if fd > low:
            os.closerange(low, min(fd, last + 1))
        low = max(low, fd + 1)


def _highest_open() -> int:
    for listing in ("/proc/self/fd", "/dev/fd"):
        try:
            names = os.listdir(listing)
        except OSError:
            continue
        numbers = [int(name) for name in names if name.isdigit()]
        if numbers:
            return max(numbers)
    try:
        import resource  # a C module, loaded already wherever the listing above is missing

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return 65535
    limit = max(value for value in (soft, hard, 1024) if value != resource.RLIM_INFINITY)
    return min(limit, 1 << 20) - 1


#: What ``--explain`` says the program inherits, in order: (descriptor, what it is).
PASSED: tuple[tuple[str, str], ...] = (
    ("0, 1, 2", "standard input, output and error, as python-sb received them"),
    (
        "the run's hand-over",
        "the run description python-sb writes for the interpreter (a memfd, or a pipe where "
        "there is none): read and closed before the program starts",
    ),
)
#: Added for learning and audit runs.
PASSED_LEARNING: tuple[str, str] = (
    "the learning record",
    "where the Python layer writes each access of a learning or audit run (to python-sb)",
)


def passed(mode: str) -> list[tuple[str, str]]:
    """The descriptors a run of ``mode`` (``enforce``, ``learn``, ``audit``) passes to the
    program; every other one python-sb inherited is closed."""

    found = list(PASSED)
    if mode != "enforce":
        found.append(PASSED_LEARNING)
    return found
