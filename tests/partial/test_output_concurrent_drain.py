"""The output relay is drained by every caller of a worker after each answer: with
``threads=N`` several at once. A poll object refuses a second thread while one polls it
(``RuntimeError: concurrent poll() invocation``), which reached a tool's caller as the call's
error under load (an agent sample's evaluation, once in four runs); every drain must hold."""

from __future__ import annotations

import socket
import sys
import threading

import pytest

from pysandboxes.partial.output import Relay


@pytest.mark.skipif(sys.platform == "win32", reason="no output relay on Windows")
def test_concurrent_drains_raise_nothing_and_lose_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    worker_end, host_end = socket.socketpair()
    relay = Relay(host_end)
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def drains() -> None:
        start.wait()
        try:
            for _ in range(20_000):
                relay.drain()
        except BaseException as exc:  # the failure this test is about
            errors.append(exc)

    threads = [threading.Thread(target=drains) for _ in range(8)]
    for thread in threads:
        thread.start()
    for n in range(200):
        worker_end.sendall(f"line {n}\n".encode())
    for thread in threads:
        thread.join()
    worker_end.close()
    relay.finish(timeout=30)
    relay.drain()
    assert errors == []
    assert capsys.readouterr().err == "".join(f"line {n}\n" for n in range(200))
