"""A host program of partial mode for ``tests/e2e/test_start_path.py``: the steps of the one
start path (launch/start.py) as a worker sees them, reported as one JSON object.

argv: WORK (the rule file's directory; it holds ``.py-sandboxes``), then the checks to run:

- ``deny-name``: a ``@sandbox`` function connects to 127.0.0.1 on a port this (host) process
  listens on, under ``net=DENY|*|localhost|*|OUT`` + ``net=ALLOW|*|*|*|OUT``; the control is the
  same function called in the host, which connects;
- ``no-memfd``: this process has no ``os.memfd_create`` (as on macOS: removed before python-sb
  is imported), and an audit hook of its own records every file it opens while a worker
  starts: a hand-over through a named file would show there;
- the stale temporary directory the test made (``STALE`` in the environment) must be gone once
  a worker has started (the sweep of every start).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading

checks = sys.argv[2:]
opened: list[str] = []
if "no-memfd" in checks:
    del os.memfd_create  # type: ignore[attr-defined]

    def watch(event: str, args: tuple[object, ...]) -> None:
        if event == "open" and isinstance(args[0], str):
            opened.append(args[0])

    sys.addaudithook(watch)

from pysandboxes import sandbox, sandbox_denials, sandboxes  # noqa: E402

work = sys.argv[1]
server = socket.create_server(("127.0.0.1", 0))
port = server.getsockname()[1]
threading.Thread(target=lambda: [server.accept() for _ in range(4)], daemon=True).start()


@sandbox
def connect(port: int) -> str:
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=10):
        return "connected"


def attempt(port: int, sandboxed: bool) -> dict[str, object]:
    try:
        return {"ok": connect(port) if sandboxed else connect.__sandbox_original__(port)}
    except Exception as exc:
        return {
            "error": type(exc).__name__,
            "denials": [d.to_dict() for d in sandbox_denials(exc)],
        }


report: dict[str, object] = {"control": attempt(port, False)}
with sandboxes(rules=os.path.join(work, ".py-sandboxes")):
    report["sandboxed"] = attempt(port, True)
    report["stale_left"] = os.path.exists(os.environ.get("STALE", "/nonexistent"))
report["named_files"] = [path for path in opened if "pysb-run" in os.path.basename(path)]
print(json.dumps(report))
