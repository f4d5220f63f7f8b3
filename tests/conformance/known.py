"""The conformance matrix's currently failing cells: cell id -> reason (the one place to edit).

Each entry becomes ``xfail(strict=True)``: when a fix lands the cell passes, the strict xfail
turns red, and the entry must be removed. A cell id is ``CASE@CONFIG`` (``CASE@python3`` for a
control); reasons name the point of issue 11 that covers the cell.
"""

from __future__ import annotations

_POINT_3 = (
    "issue 11 point 3: Python layer: a DENY host name is bypassed by connecting to its address"
)
_POINT_5 = (
    "issue 11 point 5: IN with a wildcard bind (0.0.0.0/32) is not reachable from the host "
    "(bwrap/unshare read HOST as the peer; landlock refuses it at start)"
)
_POINT_9 = (
    "issue 11 point 9: Python layer: a UDP server's reply is judged as OUT and refused (under "
    "bwrap/unshare point 5 too)"
)
_POINT_10 = (
    "issue 11 point 10: learning a server on port 0 talking to itself writes rules (|*|IN, "
    "ephemeral OUT) that bwrap/unshare/landlock refuse"
)
_POINT_12 = (
    "issue 11 point 12: Python layer: sqlite3.connect('file:...?mode=ro', uri=True) in "
    "expose-ro is refused as a write"
)
_POINT_13 = (
    "issue 11 point 13: learning grants every variable of the environment after a scan "
    "(urllib's getproxies)"
)
_LIMIT_STAR_LOOPBACK = (
    "issue 11 (announced limits): not announced at start yet: a * host does not reach the "
    "host's loopback under bwrap/unshare"
)
_LIMIT_IGNORE_LATER = (
    "issue 11 (announced limits): not announced at start yet: ignore= under bwrap/unshare "
    "does not cover files created after start"
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
    "net/deny-name-beside-star-by-ip@landlock-py": _POINT_3,
    "net/deny-name-beside-star-by-ip@subprocess-py": _POINT_3,
    "net/deny-name-by-ip@landlock-py": _POINT_3,
    "net/deny-name-by-ip@subprocess-py": _POINT_3,
    "learned/in-wildcard@bwrap": _POINT_5,
    "learned/in-wildcard@bwrap-py": _POINT_5,
    "learned/in-wildcard@landlock": _POINT_5,
    "learned/in-wildcard@unshare": _POINT_5,
    "learned/in-wildcard@unshare-py": _POINT_5,
    "net/in-wildcard@bwrap": _POINT_5,
    "net/in-wildcard@bwrap-py": _POINT_5,
    "net/in-wildcard@landlock": _POINT_5,
    "net/in-wildcard@unshare": _POINT_5,
    "net/in-wildcard@unshare-py": _POINT_5,
    "net/udp-in-reply@bwrap": _POINT_5,
    "net/udp-in-reply@unshare": _POINT_5,
    "net/udp-in-reply@bwrap-py": _POINT_9,
    "net/udp-in-reply@landlock-py": _POINT_9,
    "net/udp-in-reply@subprocess-py": _POINT_9,
    "net/udp-in-reply@unshare-py": _POINT_9,
    "net/udp-in-star-reply@bwrap-py": _POINT_9,
    "net/udp-in-star-reply@landlock-py": _POINT_9,
    "net/udp-in-star-reply@subprocess-py": _POINT_9,
    "net/udp-in-star-reply@unshare-py": _POINT_9,
    "learned/selftalk-port-0@bwrap": _POINT_10,
    "learned/selftalk-port-0@bwrap-py": _POINT_10,
    "learned/selftalk-port-0@landlock": _POINT_10,
    "learned/selftalk-port-0@unshare": _POINT_10,
    "learned/selftalk-port-0@unshare-py": _POINT_10,
    "learned/sqlite-ro-uri@bwrap-py": _POINT_12,
    "learned/sqlite-ro-uri@landlock-py": _POINT_12,
    "learned/sqlite-ro-uri@subprocess-py": _POINT_12,
    "learned/sqlite-ro-uri@unshare-py": _POINT_12,
    "sqlite/ro-uri-in-ro@bwrap-py": _POINT_12,
    "sqlite/ro-uri-in-ro@landlock-py": _POINT_12,
    "sqlite/ro-uri-in-ro@subprocess-py": _POINT_12,
    "sqlite/ro-uri-in-ro@unshare-py": _POINT_12,
    "learned/env-scan-no-secret@bwrap": _POINT_13,
    "learned/env-scan-no-secret@bwrap-py": _POINT_13,
    "learned/env-scan-no-secret@landlock": _POINT_13,
    "learned/env-scan-no-secret@landlock-py": _POINT_13,
    "learned/env-scan-no-secret@subprocess-py": _POINT_13,
    "learned/env-scan-no-secret@unshare": _POINT_13,
    "learned/env-scan-no-secret@unshare-py": _POINT_13,
    "net/out-star-all-loopback@bwrap": _LIMIT_STAR_LOOPBACK,
    "net/out-star-all-loopback@bwrap-py": _LIMIT_STAR_LOOPBACK,
    "net/out-star-all-loopback@unshare": _LIMIT_STAR_LOOPBACK,
    "net/out-star-all-loopback@unshare-py": _LIMIT_STAR_LOOPBACK,
    "net/out-star-port-loopback@bwrap": _LIMIT_STAR_LOOPBACK,
    "net/out-star-port-loopback@bwrap-py": _LIMIT_STAR_LOOPBACK,
    "net/out-star-port-loopback@unshare": _LIMIT_STAR_LOOPBACK,
    "net/out-star-port-loopback@unshare-py": _LIMIT_STAR_LOOPBACK,
    "net/udp-out-star@bwrap": _LIMIT_STAR_LOOPBACK,
    "net/udp-out-star@bwrap-py": _LIMIT_STAR_LOOPBACK,
    "net/udp-out-star@unshare": _LIMIT_STAR_LOOPBACK,
    "net/udp-out-star@unshare-py": _LIMIT_STAR_LOOPBACK,
    "files/ignore-created-after-start@bwrap": _LIMIT_IGNORE_LATER,
    "files/ignore-created-after-start@unshare": _LIMIT_IGNORE_LATER,
    "files/dotdot-in@bwrap": _FINDING_DOTDOT,
    "files/dotdot-in@bwrap-py": _FINDING_DOTDOT,
    "files/dotdot-in@unshare": _FINDING_DOTDOT,
    "files/dotdot-in@unshare-py": _FINDING_DOTDOT,
    "net/selftalk@bwrap": _FINDING_SELFTALK,
    "net/selftalk@bwrap-py": _FINDING_SELFTALK,
    "net/selftalk@unshare": _FINDING_SELFTALK,
    "net/selftalk@unshare-py": _FINDING_SELFTALK,
}
