"""Serve on a port no rule grants without calling bind(): listen() on a socket never bound makes
the kernel bind it to a port of its choice on every address. argv: FAMILY (inet or inet6).
Prints {"listening": PORT} once listening, then the verdict (reached when a client from
outside connected within a few seconds)."""

import json
import socket
import sys
from _verdict import report

FAMILY = socket.AF_INET6 if sys.argv[1] == "inet6" else socket.AF_INET


def main():
    s = socket.socket(FAMILY, socket.SOCK_STREAM)
    try:
        s.listen()
    except OSError as exc:
        report("tcp_listen_unbound", False, exc.errno, exc)
        return
    print(json.dumps({"listening": s.getsockname()[1]}), flush=True)
    s.settimeout(5)
    try:
        conn, peer = s.accept()
    except TimeoutError:
        report("tcp_listen_unbound", False, None, "listening, but no connection came from outside")
        return
    conn.sendall(b"served")
    report("tcp_listen_unbound", True, None, f"accepted {peer}")


main()
