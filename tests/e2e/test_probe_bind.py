"""A TCP bind to port 0 on loopback is judged when the socket listens: a bind alone serves
nothing (urllib3's IPv6 check binds ``::1`` port 0 and closes), so it needs no ``IN`` rule, is
no denial and is not learned; ``listen`` on it needs the ``IN`` rule, as before
(docs/network.md, *A bind that serves nothing*)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_unshare_e2e import provider_ok
from tests.helpers import base_env, run_python, run_sb

PROGRAM = """
import socket, sys
for family, host in ((socket.AF_INET6, "::1"), (socket.AF_INET, "127.0.0.1")):
    sock = socket.socket(family)
    try:
        sock.bind((host, 0))
        print("bound", host)
        if "listen" in sys.argv[1:]:
            sock.listen()
            print("listening", host)
    except OSError as exc:
        print("refused", host, exc.errno, type(exc).__name__)
    finally:
        sock.close()
"""


@pytest.fixture
def program(project: Path) -> Path:
    (project / ".py-sandboxes").write_text("expose-ro=.\npython-import=socket\n")
    script = project / "probe.py"
    script.write_text(PROGRAM)
    return script


def sb(provider: str, project: Path, home: Path, *args: str) -> tuple[list[str], list[dict]]:
    denials = project.parent / "denials.jsonl"
    denials.unlink(missing_ok=True)
    result = run_sb(
        [f"--os-sandbox={provider}", f"--denials={denials}", "probe.py", *args],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == 0, result.stderr
    found = [json.loads(line) for line in denials.read_text().splitlines()]
    return result.stdout.splitlines(), found


def test_control_without_the_sandbox(program: Path, project: Path) -> None:
    result = run_python([str(program), "listen"], cwd=project)
    assert result.stdout.splitlines() == [
        "bound ::1",
        "listening ::1",
        "bound 127.0.0.1",
        "listening 127.0.0.1",
    ]


@pytest.mark.parametrize("provider", ["subprocess", "bwrap", "unshare"])
def test_a_bind_alone_needs_no_in_rule(
    provider: str, program: Path, project: Path, home: Path
) -> None:
    if provider != "subprocess":
        provider_ok(provider)
    lines, denials = sb(provider, project, home)
    assert lines == ["bound ::1", "bound 127.0.0.1"]
    assert denials == []


@pytest.mark.parametrize("provider", ["subprocess", "landlock", "bwrap", "unshare"])
def test_listen_on_it_is_refused_without_an_in_rule(
    provider: str, program: Path, project: Path, home: Path
) -> None:
    """The attack: a server on a loopback port the kernel picks, with no IN rule."""

    if provider != "subprocess":
        provider_ok(provider)
    lines, denials = sb(provider, project, home, "listen")
    if provider == "landlock":
        # The kernel judges the bind first (Landlock has no listen right): EACCES, no denial.
        assert lines == ["refused ::1 13 PermissionError", "refused 127.0.0.1 13 PermissionError"]
        assert denials == []
        return
    refused = "RuleConnectionRefusedError"
    assert lines == [
        "bound ::1",
        f"refused ::1 111 {refused}",
        "bound 127.0.0.1",
        f"refused 127.0.0.1 111 {refused}",
    ], lines
    assert [(d["target"], d["detail"], d["suggestion"]) for d in denials] == [
        ("[::1]:0", "IN", "net=ALLOW|TCP|::1|0|IN"),
        ("[127.0.0.1]:0", "IN", "net=ALLOW|TCP|127.0.0.1|0|IN"),
    ]


def test_landlock_without_the_python_layer_refuses_the_bind(
    program: Path, project: Path, home: Path
) -> None:
    """Landlock judges binds, not listen: there the probe's bind fails (EACCES), an OSError
    the probe handles, and no rule is needed for the program to go on."""

    provider_ok("landlock")
    lines, denials = sb("landlock", project, home, "--py-sandbox=false")
    assert lines == ["refused ::1 13 PermissionError", "refused 127.0.0.1 13 PermissionError"]
    assert denials == []


def test_learning_writes_the_in_line_only_for_a_server(
    program: Path, project: Path, home: Path
) -> None:
    (project / ".py-sandboxes").unlink()
    for args, expected in (
        ([], []),
        (["listen"], ["ALLOW|TCP|127.0.0.1|0|IN", "ALLOW|TCP|::1|0|IN"]),
    ):
        target = project.parent / "learned.py-sandboxes"
        target.unlink(missing_ok=True)
        result = run_sb([f"--learn={target}", "probe.py", *args], cwd=project, env=base_env(home))
        assert result.returncode == 0, result.stderr
        text = target.read_text() if target.exists() else ""
        net = sorted(
            line.split("  #")[0].removeprefix("net=")
            for line in text.splitlines()
            if line.startswith("net=")
        )
        assert net == expected, text
