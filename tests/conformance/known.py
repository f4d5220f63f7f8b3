"""The conformance matrix's currently failing cells: cell id -> reason (the one place to edit).

Each entry becomes ``xfail(strict=True)``: when a fix lands the cell passes, the strict xfail
turns red, and the entry must be removed. A cell id is ``CASE@CONFIG`` (``CASE@python3`` for a
control); reasons name the point of issue 11 that covers the cell.
"""

from __future__ import annotations

_POINT_10 = (
    "issue 11 point 10: learning a server on port 0 talking to itself writes rules (|*|IN, "
    "ephemeral OUT) that bwrap/unshare/landlock refuse"
)
_FINDING_DOTDOT = (
    "issue 11 (matrix finding): bwrap/unshare: a path through an unexposed directory "
    "('outside/../ro') does not resolve (only exposed paths exist); the rules judge it where "
    "it lands"
)
_FINDING_SELFTALK = (
    "issue 11 (matrix finding): bwrap/unshare: an OUT rule to 127.0.0.1:P makes pasta hold "
    "port P inside the sandbox, so the program's own server on P (IN rule) cannot bind "
    "(EADDRINUSE)"
)

KNOWN_FAILURES: dict[str, str] = {
    "learned/selftalk-port-0@bwrap": _POINT_10,
    "learned/selftalk-port-0@bwrap-py": _POINT_10,
    "learned/selftalk-port-0@landlock": _POINT_10,
    "learned/selftalk-port-0@unshare": _POINT_10,
    "learned/selftalk-port-0@unshare-py": _POINT_10,
    "files/dotdot-in@bwrap": _FINDING_DOTDOT,
    "files/dotdot-in@bwrap-py": _FINDING_DOTDOT,
    "files/dotdot-in@unshare": _FINDING_DOTDOT,
    "files/dotdot-in@unshare-py": _FINDING_DOTDOT,
    "net/selftalk@bwrap": _FINDING_SELFTALK,
    "net/selftalk@bwrap-py": _FINDING_SELFTALK,
    "net/selftalk@unshare": _FINDING_SELFTALK,
    "net/selftalk@unshare-py": _FINDING_SELFTALK,
}
