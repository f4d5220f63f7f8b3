"""The CI recipe (examples/ci): a pull request's pytest suite run as
``python-sb --pysandboxes-config=ci.py-sandboxes -m pytest`` under bwrap. The honest tests pass;
the test that reads a runner secret and the test that calls a host the rules do not grant are
refused; without python-sb (the control) all four succeed."""

from __future__ import annotations

import shutil
import socket
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.providers import get_provider
from tests.helpers import REPO, base_env, require, require_tool, run_python, run_sb

RECIPE = REPO / "examples" / "ci"
COMMAND = [
    "--pysandboxes-config=ci.py-sandboxes",
    "-m",
    "pytest",
    "-p",
    "no:cacheprovider",
    "--junitxml=test-reports/junit.xml",
]
SECRET = "ghs_runner_token_of_the_job"


class Server:
    """A TCP service on the host's loopback that answers one HTTP line to each connection."""

    def __init__(self, body: bytes) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.body = body
        self.received: list[bytes] = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    self.received.append(conn.recv(1000))
                    head = f"HTTP/1.0 200 OK\r\nContent-Length: {len(self.body)}\r\n\r\n"
                    conn.sendall(head.encode() + self.body)
                except OSError:
                    pass


@pytest.fixture
def servers() -> Iterator[tuple[Server, Server]]:
    granted, other = Server(b"service ok"), Server(b"exfiltration endpoint")
    yield granted, other
    granted.sock.close()
    other.sock.close()


@pytest.fixture
def checkout(tmp_path: Path, servers: tuple[Server, Server]) -> Path:
    """The pull request's checkout with the base branch's ci.py-sandboxes, on free ports."""

    granted, other = servers
    root = tmp_path / "checkout"
    shutil.copytree(RECIPE / "project", root)
    rules = (RECIPE / "ci.py-sandboxes").read_text()
    (root / "ci.py-sandboxes").write_text(rules.replace("8765", str(granted.port)))
    test = root / "tests" / "test_calc.py"
    text = test.read_text().replace("8765", str(granted.port)).replace("8766", str(other.port))
    test.write_text(text)
    (root / "test-reports").mkdir()
    return root


def outcomes(report: Path) -> dict[str, str]:
    """Each test's outcome from the JUnit report: "passed" or the failure message."""

    result = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        failure = case.find("failure")
        error = case.find("error")
        bad = failure if failure is not None else error
        result[case.get("name", "")] = "passed" if bad is None else bad.get("message", "failed")
    return result


def job_env(home: Path) -> dict[str, str]:
    """The runner's environment: CI, and a secret the tests must not see."""

    return base_env(home, {"CI": "true", "GITHUB_TOKEN": SECRET, "ACTIONS_RUNTIME_TOKEN": "x"})


def test_control_without_python_sb(
    checkout: Path, home: Path, servers: tuple[Server, Server]
) -> None:
    result = run_python(COMMAND[1:], cwd=checkout, env=job_env(home))
    assert result.returncode == 0, result.stdout + result.stderr
    assert set(outcomes(checkout / "test-reports" / "junit.xml").values()) == {"passed"}
    assert servers[1].received == [b"stolen"]


def test_sandboxed_suite(checkout: Path, home: Path, servers: tuple[Server, Server]) -> None:
    try:
        available = bool(get_provider("bwrap").availability())
    except ConfigError:
        available = False
    require(available, "os-sandbox=bwrap cannot run on this machine")
    require_tool("pasta", "passt")
    require_tool("nft", "nftables")
    result = run_sb(COMMAND, cwd=checkout, env=job_env(home))
    assert result.returncode == 1, result.stdout + result.stderr  # pytest: some tests failed
    found = outcomes(checkout / "test-reports" / "junit.xml")
    assert found["test_add"] == "passed"
    assert found["test_granted_service"] == "passed"
    assert found["test_reads_runner_secret"] == "KeyError: 'GITHUB_TOKEN'"
    assert found["test_calls_out"].startswith("pysandboxes.errors.RuleConnectionRefusedError:")
    assert f"[127.0.0.1]:{servers[1].port} DENIED" in found["test_calls_out"]
    assert servers[1].received == []  # nothing reached the other host
    assert SECRET not in result.stdout + result.stderr


def test_the_workflow_runs_the_tested_command() -> None:
    workflow = (RECIPE / ".github" / "workflows" / "sandboxed-tests.yml").read_text()
    assert "python-sb " + " ".join(COMMAND) in workflow
    # the rule file comes from the base branch, not from the pull request
    assert 'git show "origin/${GITHUB_BASE_REF}:ci.py-sandboxes"' in workflow
    assert "persist-credentials: false" in workflow
    rules = (RECIPE / "ci.py-sandboxes").read_text().splitlines()
    assert "os-sandbox=bwrap" in rules
    assert "learn=false" in rules
    assert not [line for line in rules if line.startswith("env=") and "TOKEN" in line]
