"""What the real-world suite found learning or replay got wrong, each reduced to a minimal
program (the report of issue 12 names them), kept as regression tests now that each is fixed:

- A library's import probe of a module installed nowhere was refused in a replay and written to
  ``--denials=FILE``, although audit reports nothing (docs/python-layer.md, *Probes*).
- A read of a file that does not exist (pdb reads ``~/.pdbrc``) was learned as ``expose-ro=`` of
  it, and the replay skips a learned path that does not exist: the program got
  ``PermissionError`` (and a denial) where it got ``FileNotFoundError`` (docs/python-layer.md,
  *Files that do not exist*).
- A bind to port 0 that is no server (urllib3's IPv6 check binds ``::1`` port 0) was learned as
  an ``IN`` rule, and widened the run's connection to a loopback service on an ephemeral port
  into the whole ephemeral range (docs/network.md, *A bind that serves nothing*).
"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

from tests.helpers import run_sb
from tests.realworld import harness


def test_a_probe_of_a_missing_module_is_no_refusal(project: Path, home: Path) -> None:
    (project / "probe.py").write_text(
        "try:\n    import no_such_module_anywhere\nexcept ImportError:\n    print('absent')\n"
    )
    env = harness.run_env(home)
    learned, _ = harness.learn(["probe.py"], project, env, project / ".py-sandboxes")
    assert learned == "absent\n"
    denials = project.parent / "denials.jsonl"
    result = run_sb(
        [f"--denials={denials}", "probe.py"], cwd=project, env={**env, "OS_SANDBOX": "subprocess"}
    )
    assert result.stdout == "absent\n", result.stderr
    refused = [json.loads(line) for line in denials.read_text().splitlines()]
    assert refused == []


def test_a_probe_bind_is_not_a_server(project: Path, home: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))  # a service outside the program
    port = server.getsockname()[1]

    def serve() -> None:
        peer, _ = server.accept()
        with peer:
            peer.sendall(b"hello\n")

    threading.Thread(target=serve, daemon=True).start()
    (project / "client.py").write_text(
        "import socket, sys\n"
        "probe = socket.socket(socket.AF_INET6)\n"  # as urllib3.util.connection._has_ipv6
        "try:\n    probe.bind(('::1', 0))\nexcept OSError:\n    pass\nprobe.close()\n"
        "with socket.create_connection(('127.0.0.1', int(sys.argv[1]))) as conn:\n"
        "    print(conn.recv(100).decode().strip())\n"
    )
    env = harness.run_env(home)
    try:
        learned, rules = harness.learn(
            ["client.py", str(port)], project, env, project / ".py-sandboxes"
        )
    finally:
        server.close()
    assert learned == "hello\n"
    assert rules.values("net") == [f"ALLOW|TCP|127.0.0.1|{port}|OUT"], rules.text


def test_a_missing_file_the_program_looks_for_replays(project: Path, home: Path) -> None:
    (project / "rc.py").write_text(
        "import os\n"
        "try:\n    open(os.path.expanduser('~/.pdbrc')).read()\n"
        "except FileNotFoundError as exc:\n    print('not found', exc.errno)\n"
    )
    env = harness.run_env(home)
    learned, _ = harness.learn(["rc.py"], project, env, project / ".py-sandboxes")
    assert learned == "not found 2\n"
    denials = project.parent / "denials.jsonl"
    result = run_sb(
        [f"--denials={denials}", "rc.py"], cwd=project, env={**env, "OS_SANDBOX": "subprocess"}
    )
    assert result.stdout == learned, result.stderr
    assert denials.read_text() == ""
