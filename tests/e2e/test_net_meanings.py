"""One meaning per ``net=`` rule under every enforcer (issue 11, network points), through the
real ``python-sb``: DENY by name holds for the name's addresses (point 3); an ``IN`` rule's HOST
is the address the program binds, forwarded from the host by the namespace providers (point 5);
a UDP server granted ``IN`` answers its peers (point 9)."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_unshare_e2e import provider_ok
from tests.helpers import base_env, require_tool, run_python, run_sb

SELF_CONNECT = """
import socket, sys
srv = socket.socket()
srv.bind(("127.0.0.1", int(sys.argv[1])))
srv.listen()
try:
    socket.create_connection(("127.0.0.1", srv.getsockname()[1]), timeout=5).close()
    print("CONNECTED")
except ConnectionError as exc:
    print("REFUSED", type(exc).__name__)
"""

PYTHON_LAYER = ["subprocess", "landlock", "bwrap", "unshare"]


def needs(provider: str) -> None:
    provider_ok(provider)
    if provider in ("bwrap", "unshare"):
        require_tool("pasta", "passt")
        require_tool("nft", "nftables")


def sb(
    provider: str, project: Path, env: dict[str, str], *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return run_sb(
        [f"--os-sandbox={provider}", f"--expose-ro={project}", *args],
        cwd=project,
        env=env,
        timeout=timeout,
    )


@pytest.mark.parametrize("provider", PYTHON_LAYER)
def test_deny_name_refuses_its_address(provider: str, project: Path, home: Path) -> None:
    """``DENY|*|localhost|*|OUT`` beside ``ALLOW|*|*|*|OUT``: connecting to 127.0.0.1 (the
    name's address, hard-coded) is refused by the Python layer; without the DENY line (the
    control) the same program connects."""

    needs(provider)
    (project / "prog.py").write_text(SELF_CONNECT)
    env = base_env(home)
    port = str(free_port())
    assert run_python(["prog.py", port], cwd=project, env=env).stdout == "CONNECTED\n"
    rules = ("--net=ALLOW|*|*|*|OUT", f"--net=ALLOW|TCP|127.0.0.1|{port}|IN")
    control = sb(provider, project, env, *rules, "--python-import=socket", "prog.py", port)
    assert control.stdout == "CONNECTED\n", control.stderr
    result = sb(
        provider,
        project,
        env,
        *rules,
        "--net=DENY|*|localhost|*|OUT",
        "--python-import=socket",
        "prog.py",
        port,
    )
    assert result.stdout == "REFUSED RuleConnectionRefusedError\n", result.stderr


@pytest.mark.parametrize("provider", PYTHON_LAYER)
def test_unresolvable_deny_name_stops_the_run(provider: str, project: Path, home: Path) -> None:
    """A DENY name that does not resolve cannot be enforced: nothing runs (DESIGN decision 6),
    whichever enforcer holds the rule."""

    needs(provider)
    (project / "prog.py").write_text("open('ran', 'w').close()\n")
    (project / ".py-sandboxes").write_text(
        f"expose-rw={project}\nnet=ALLOW|*|*|*|OUT\nnet=DENY|*|nowhere.invalid|*|OUT\n"
    )
    env = base_env(home)
    result = run_sb([f"--os-sandbox={provider}", "prog.py"], cwd=project, env=env)
    assert result.returncode == 2, result.stderr
    assert ".py-sandboxes(3): net=DENY|*|nowhere.invalid|*|OUT: cannot resolve" in result.stderr
    assert not (project / "ran").exists()
    # Control: the same file without the DENY line runs the program.
    (project / ".py-sandboxes").write_text(f"expose-rw={project}\nnet=ALLOW|*|*|*|OUT\n")
    assert run_sb([f"--os-sandbox={provider}", "prog.py"], cwd=project, env=env).returncode == 0
    assert (project / "ran").exists()


def free_port(kind: int = socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
