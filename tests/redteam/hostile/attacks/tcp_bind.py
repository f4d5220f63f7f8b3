"""Serve on a loopback TCP port that no rule grants, and get a connection from the host.
argv: PORT. Prints {"listening": true} once listening, then the verdict (reached when a client
from outside connected within a few seconds)."""

import json
import socket
import sys
from _verdict import report


def main():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", int(sys.argv[1])))
        s.listen()
    except OSError as exc:
        report("tcp_bind", False, exc.errno, exc)
        return
    print(json.dumps({"listening": True}), flush=True)
    s.settimeout(5)
    try:
        conn, peer = s.accept()
    except TimeoutError:
        report("tcp_bind", False, None, "listening, but no connection came from outside")
        return
    conn.sendall(b"served")
    report("tcp_bind", True, None, f"accepted {peer}")


main()
