"""``sqlite3.connect`` with a ``file:`` URI through the real ``python-sb`` (issue 11, point 12):
``mode=ro`` inside ``expose-ro`` is a read; what SQLite would write is still refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.e2e.test_unshare_e2e import provider_ok
from tests.helpers import base_env, run_python, run_sb

PROGRAM = """
import sqlite3, sys
try:
    db = sqlite3.connect(sys.argv[1], uri=True)
    print("ROWS", db.execute("select x from t").fetchall())
    db.close()
except Exception as exc:
    print("REFUSED", type(exc).__name__)
"""


@pytest.fixture
def data(project: Path) -> Path:
    """``data/ro.db`` (rollback journal) and ``data/wal.db`` (WAL mode), each with one row."""

    folder = project / "data"
    folder.mkdir()
    for name, wal in (("ro.db", False), ("wal.db", True)):
        db = sqlite3.connect(folder / name)
        if wal:
            db.execute("pragma journal_mode=wal")
        db.execute("create table t(x)")
        db.execute("insert into t values (42)")
        db.commit()
        db.close()
    (project / "prog.py").write_text(PROGRAM)
    (project / ".py-sandboxes").write_text(f"expose-ro={project}\npython-import=sqlite3\n")
    return folder


CASES = [
    ("file:data/ro.db?mode=ro", "ROWS [(42,)]"),
    ("file:data/ro.db?mode=ro&immutable=1", "ROWS [(42,)]"),
    ("file:data/wal.db?mode=ro&immutable=1", "ROWS [(42,)]"),
    ("file:data/ro.db", "REFUSED RulePermissionError"),  # read-write
    ("file:data/ro.db?mode=rw", "REFUSED RulePermissionError"),
    # a read-only open of a WAL database creates and writes data/wal.db-wal and -shm
    ("file:data/wal.db?mode=ro", "REFUSED RulePermissionError"),
]


@pytest.mark.parametrize(("uri", "outcome"), CASES)
def test_uri_modes_under_the_python_layer(
    uri: str, outcome: str, data: Path, project: Path, home: Path
) -> None:
    env = base_env(home)
    result = run_sb(["--os-sandbox=subprocess", "prog.py", uri], cwd=project, env=env)
    assert result.stdout.strip() == outcome, result.stderr
    # Only what the guard allowed happened: no side file next to the read-only databases.
    assert sorted(p.name for p in data.iterdir()) == ["ro.db", "wal.db"]


def test_control_plain_python_opens_every_uri(data: Path, project: Path, home: Path) -> None:
    env = base_env(home)
    for uri, _outcome in CASES:
        assert run_python(["prog.py", uri], cwd=project, env=env).stdout == "ROWS [(42,)]\n"


@pytest.mark.parametrize("provider", ["landlock", "bwrap", "unshare"])
def test_read_only_uri_under_kernel_providers(
    provider: str, data: Path, project: Path, home: Path
) -> None:
    provider_ok(provider)
    env = base_env(home)
    result = run_sb(
        [f"--os-sandbox={provider}", "prog.py", "file:data/ro.db?mode=ro"], cwd=project, env=env
    )
    assert result.stdout.strip() == "ROWS [(42,)]", result.stderr
