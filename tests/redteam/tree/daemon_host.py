"""The host of the process-tree attacks (``test_process_tree.py``): a ``@sandbox`` function
starts a daemon -- forked, ``setsid``, forked again, so that a process group, a session and
its parent's death all leave it running -- then the call times out, or the ``with`` block
ends. Prints one JSON line: what the call raised and the daemon's marker.

argv: RULES (a rule file) MODE (``timeout`` or ``end``) MARKER (a word that names this
attack's daemon in its command line, for the test to look for it in /proc) [control]

With ``control`` the same function runs in a plain child process of this one, which is
SIGKILLed (``timeout``) or ends (``end``): no sandbox, the daemon's objective reached.
"""

from __future__ import annotations

import json
import os
import sys
import time

from pysandboxes import sandbox, sandboxes

DAEMON = "import time\nwhile True:\n    time.sleep(0.2)\n"


def start_daemon(marker: str) -> int:
    """Fork, setsid, fork again and exec the daemon; the first child's pid."""

    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork():
                os._exit(0)
            null = os.open(os.devnull, os.O_RDWR)  # a daemon's streams: nobody's pipes
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.execv(sys.executable, [sys.executable, "-c", DAEMON, marker])
        finally:
            os._exit(1)
    os.waitpid(pid, 0)
    return pid


@sandbox(timeout=5)
def daemon_then_wait(marker: str) -> str:
    start_daemon(marker)
    time.sleep(120)  # the call's timeout kills the worker first
    return "slept"


@sandbox
def daemon_then_return(marker: str) -> str:
    start_daemon(marker)
    return "started"


def main() -> None:
    rules, mode, marker = sys.argv[1:4]
    control = sys.argv[4:] == ["control"]
    report: dict[str, object] = {"marker": marker}
    if control:
        child = os.fork()
        if child == 0:
            start_daemon(marker)
            if mode == "timeout":
                time.sleep(120)
            os._exit(0)
        if mode == "timeout":
            time.sleep(2)
            os.kill(child, 9)
        os.waitpid(child, 0)
        report["outcome"] = "control"
    else:
        with sandboxes(rules=rules):
            try:
                if mode == "timeout":
                    report["outcome"] = daemon_then_wait(marker)
                else:
                    report["outcome"] = daemon_then_return(marker)
            except Exception as exc:
                report["outcome"] = type(exc).__name__
            if mode == "timeout":
                report["restarted"] = daemon_then_return.__name__  # the with block goes on
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
