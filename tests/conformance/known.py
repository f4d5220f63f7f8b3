"""The conformance matrix's currently failing cells: cell id -> reason (the one place to edit).

Each entry becomes ``xfail(strict=True)``: when a fix lands the cell passes, the strict xfail
turns red, and the entry must be removed. A cell id is ``CASE@CONFIG`` (``CASE@python3`` for a
control); reasons name the point of issue 11 that covers the cell.
"""

from __future__ import annotations

_POINT_1 = (
    "issue 11 point 1: landlock, Python layer off: an expose-ro below an expose-rw is writable"
)
_POINT_2 = (
    "issue 11 point 2: /etc/ssl/private is readable with the Python layer off (all of "
    "/etc/ssl granted)"
)
_POINT_3 = (
    "issue 11 point 3: Python layer: a DENY host name is bypassed by connecting to its address"
)
_POINT_4 = (
    "issue 11 point 4: /etc/mime.types is not a default grant of every enforcer (mimetypes "
    "fails or falls back)"
)
_POINT_5 = (
    "issue 11 point 5: IN with a wildcard bind (0.0.0.0/32) is not reachable from the host "
    "(bwrap/unshare read HOST as the peer; landlock refuses it at start)"
)
_POINT_6 = (
    "issue 11 point 6: bwrap: expose-ro=/etc/passwd, /etc/group or /etc/hosts crashes "
    "bubblewrap (Can't bind mount)"
)
_POINT_7 = (
    "issue 11 point 7: bwrap/unshare: a path exposed through a symbolic link does not exist "
    "under the rule's name"
)
_POINT_8 = (
    "issue 11 point 8: a script whose directory no rule exposes: read by the Python layer, "
    "'can't open file' under the kernel providers"
)
_POINT_9 = (
    "issue 11 point 9: Python layer: a UDP server's reply is judged as OUT and refused (under "
    "bwrap/unshare point 5 too)"
)
_POINT_10 = (
    "issue 11 point 10: learning a server on port 0 talking to itself writes rules (|*|IN, "
    "ephemeral OUT) that bwrap/unshare/landlock refuse"
)
_POINT_11 = (
    "issue 11 point 11: learning records nothing of what a child does (the executable, its files)"
)
_POINT_12 = (
    "issue 11 point 12: Python layer: sqlite3.connect('file:...?mode=ro', uri=True) in "
    "expose-ro is refused as a write"
)
_POINT_13 = (
    "issue 11 point 13: learning grants every variable of the environment after a scan "
    "(urllib's getproxies)"
)
_LIMIT_LANDLOCK_EXEC = (
    "issue 11 (announced limits): not announced at start yet: landlock needs the executables' "
    "directories exposed"
)
_LIMIT_LANDLOCK_UNIX = (
    "issue 11 (announced limits): not announced at start yet: landlock refuses AF_UNIX unless "
    "landlock.unix-sockets=true"
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
    "files/hardlink-ro-file-in-rw@landlock": _POINT_1,
    "files/ro-dir-in-rw-create@landlock": _POINT_1,
    "files/ro-dir-in-rw-mkdir@landlock": _POINT_1,
    "files/ro-dir-in-rw-remove@landlock": _POINT_1,
    "files/ro-dir-in-rw-rename-out@landlock": _POINT_1,
    "files/ro-dir-in-rw-write@landlock": _POINT_1,
    "files/ro-file-in-rw-remove@landlock": _POINT_1,
    "files/ro-file-in-rw-replace@landlock": _POINT_1,
    "files/ro-file-in-rw-write@landlock": _POINT_1,
    "sqlite/write-ro-dir-in-rw@landlock": _POINT_1,
    "defaults/ssl-private@bwrap": _POINT_2,
    "defaults/ssl-private@landlock": _POINT_2,
    "defaults/ssl-private@unshare": _POINT_2,
    "net/deny-name-beside-star-by-ip@landlock-py": _POINT_3,
    "net/deny-name-beside-star-by-ip@subprocess-py": _POINT_3,
    "net/deny-name-by-ip@landlock-py": _POINT_3,
    "net/deny-name-by-ip@subprocess-py": _POINT_3,
    "defaults/mime-types-file@bwrap": _POINT_4,
    "defaults/mime-types-file@bwrap-py": _POINT_4,
    "defaults/mime-types-file@landlock": _POINT_4,
    "defaults/mime-types-file@landlock-py": _POINT_4,
    "defaults/mime-types-file@unshare": _POINT_4,
    "defaults/mime-types-file@unshare-py": _POINT_4,
    "defaults/mime-types@bwrap": _POINT_4,
    "defaults/mime-types@bwrap-py": _POINT_4,
    "defaults/mime-types@landlock": _POINT_4,
    "defaults/mime-types@landlock-py": _POINT_4,
    "defaults/mime-types@unshare": _POINT_4,
    "defaults/mime-types@unshare-py": _POINT_4,
    "learned/mimetypes@bwrap": _POINT_4,
    "learned/mimetypes@bwrap-py": _POINT_4,
    "learned/mimetypes@landlock": _POINT_4,
    "learned/mimetypes@landlock-py": _POINT_4,
    "learned/mimetypes@unshare": _POINT_4,
    "learned/mimetypes@unshare-py": _POINT_4,
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
    "defaults/group-exposed@bwrap": _POINT_6,
    "defaults/group-exposed@bwrap-py": _POINT_6,
    "defaults/hosts-exposed@bwrap": _POINT_6,
    "defaults/hosts-exposed@bwrap-py": _POINT_6,
    "defaults/passwd-exposed@bwrap": _POINT_6,
    "defaults/passwd-exposed@bwrap-py": _POINT_6,
    "files/exposed-file-via-link@bwrap": _POINT_7,
    "files/exposed-file-via-link@bwrap-py": _POINT_7,
    "files/exposed-file-via-link@unshare": _POINT_7,
    "files/exposed-file-via-link@unshare-py": _POINT_7,
    "files/exposed-rw-via-link@bwrap": _POINT_7,
    "files/exposed-rw-via-link@bwrap-py": _POINT_7,
    "files/exposed-rw-via-link@unshare": _POINT_7,
    "files/exposed-rw-via-link@unshare-py": _POINT_7,
    "files/exposed-via-link-list@bwrap": _POINT_7,
    "files/exposed-via-link-list@bwrap-py": _POINT_7,
    "files/exposed-via-link-list@unshare": _POINT_7,
    "files/exposed-via-link-list@unshare-py": _POINT_7,
    "files/exposed-via-link-read@bwrap": _POINT_7,
    "files/exposed-via-link-read@bwrap-py": _POINT_7,
    "files/exposed-via-link-read@unshare": _POINT_7,
    "files/exposed-via-link-read@unshare-py": _POINT_7,
    "defaults/script-dir-not-exposed@bwrap": _POINT_8,
    "defaults/script-dir-not-exposed@bwrap-py": _POINT_8,
    "defaults/script-dir-not-exposed@landlock": _POINT_8,
    "defaults/script-dir-not-exposed@landlock-py": _POINT_8,
    "defaults/script-dir-not-exposed@subprocess-py": _POINT_8,
    "defaults/script-dir-not-exposed@unshare": _POINT_8,
    "defaults/script-dir-not-exposed@unshare-py": _POINT_8,
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
    "learned/child-cat@bwrap": _POINT_11,
    "learned/child-cat@bwrap-py": _POINT_11,
    "learned/child-cat@landlock": _POINT_11,
    "learned/child-cat@landlock-py": _POINT_11,
    "learned/child-cat@unshare": _POINT_11,
    "learned/child-cat@unshare-py": _POINT_11,
    "learned/exec-system-binary@landlock": _POINT_11,
    "learned/exec-system-binary@landlock-py": _POINT_11,
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
    "children/cat-reads-granted@landlock": _LIMIT_LANDLOCK_EXEC,
    "children/cat-reads-granted@landlock-py": _LIMIT_LANDLOCK_EXEC,
    "defaults/exec-system-binary@landlock": _LIMIT_LANDLOCK_EXEC,
    "defaults/exec-system-binary@landlock-py": _LIMIT_LANDLOCK_EXEC,
    "net/unix-socket-in-rw@landlock": _LIMIT_LANDLOCK_UNIX,
    "net/unix-socket-in-rw@landlock-py": _LIMIT_LANDLOCK_UNIX,
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
