#!/usr/bin/env -S python-sb
# Launched by the shebang through python-sb, never by a bare `python`.
# Rules: ./.py-sandboxes, next to this script (which grants no network and no socket module).
"""A script of the same skill that tries to send the report out: the rule file stops it at
its ``import socket``, before any connection is attempted."""

import socket

with socket.socket() as connection:
    connection.settimeout(1)
    try:
        connection.connect(("127.0.0.1", 9))
        print("upload: connected")
    except OSError as exc:
        print(f"upload: socket module available, connection failed ({exc.strerror})")
