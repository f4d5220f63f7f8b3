"""Legitimate network and process use under the same rules; every step must work.
argv: GRANTED_CONNECT_PORT BANNER GRANTED_BIND_PORT"""

import json
import os
import signal
import socket
import subprocess
import sys
import time

port, banner, bind_port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
results = {}


def step(name, fn):
    try:
        fn()
        results[name] = "ok"
    except Exception as exc:
        results[name] = f"{type(exc).__name__}: {exc}"


def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    assert s.recv(100).decode() == banner


def serve():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", bind_port))
    s.listen()
    s.close()


def serve_from_thread():
    import threading

    errors = []

    def run():
        try:
            serve()
        except OSError as exc:
            errors.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if errors:
        raise errors[0]


def serve_from_child():
    pid = os.fork()
    if pid == 0:
        try:
            serve()
            os._exit(0)
        except OSError:
            os._exit(1)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def signal_own_child():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    time.sleep(0.1)
    os.kill(child.pid, signal.SIGTERM)
    assert child.wait(timeout=30) == -signal.SIGTERM


def fork_wait():
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 7


step("connect_granted_port", connect)
step("bind_granted_port", serve)
step("bind_granted_port_in_a_thread", serve_from_thread)
step("bind_granted_port_in_a_child", serve_from_child)
step("signal_own_child", signal_own_child)
step("signal_self", lambda: os.kill(os.getpid(), 0))
step("fork_wait", fork_wait)
print(json.dumps(results))
