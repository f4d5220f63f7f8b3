"""``guard/sqlite.py``'s reading of ``file:`` URIs against the SQLite library itself
(issue 11, point 12): for each URI, what the guard says SQLite opens -- nothing, or which file,
read-only or read-write, with or without the WAL side files -- is what SQLite does."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from pysandboxes.guard.sqlite import build_uri_parser, is_wal_database

URIS = [
    "file:plain.db",
    "file:plain.db?mode=ro",
    "file:plain.db?mode=rw",
    "file:plain.db?mode=rwc",
    "file:plain.db?mode=memory",
    "file:plain.db?mode=ro&mode=rwc",
    "file:plain.db?mode=rwc&mode=ro",
    "file:plain.db?mode=memory&mode=rwc",
    "file:plain.db?mode=memory&mode=ro",
    "file:plain.db?mode=RO",
    "file:plain.db?mode",
    "file:plain.db?mode=ro#?mode=rw",
    "file:plain.db#x?mode=ro",
    "file:plain.db%3Fmode=ro",
    "file:pla%69n.db?mo%64e=r%6F",
    "file:plain.db%00junk?mode=ro",
    "file:plain.db?mo%00de=rw&mode=ro",
    "file:plain.db?mode=r%00w",
    "file:plain.db?&mode=ro",
    "file:plain.db?=x&mode=ro",
    "file:plain.db?a&mode=ro",
    "file:plain.db?cache=shared&mode=ro",
    "file:plain.db?cache=other&mode=ro",
    "file:plain.db?vfs=memdb",
    "file:plain.db?vfs=unix-none&mode=ro",
    "file:plain.db?vfs=no-such-vfs",
    "file://localhost{cwd}/plain.db?mode=ro",
    "file://{cwd}/plain.db",
    "file://elsewhere{cwd}/plain.db",
    "file:{cwd}/sub/../plain.db?mode=ro",
    "file::memory:",
    "file:new.db",
    "file:new.db?mode=ro",
    "file:new%2Edb?mode=rwc",
    "file:wal.db?mode=ro",
    "file:wal.db?mode=ro&immutable=1",
    "file:wal.db?mode=ro&immutable=yes",
    "file:wal.db?mode=ro&immutable=TRUE",
    "file:wal.db?mode=ro&immutable=256",
    "file:wal.db?mode=ro&immutable=0&immutable=1",
    "file:wal.db?mode=ro&immutable=full",
    "file:wal.db?mode=ro&immutable=1x",
]


def observe(directory: Path, uri: str) -> tuple[str | None, bool, bool] | None:
    """What SQLite does with ``uri`` in ``directory``: ``None`` when it refuses to open, else
    (the file it opened, or ``None``; whether it can write; whether side files appeared)."""

    before = set(os.listdir(directory))
    try:
        db = sqlite3.connect(uri, uri=True)
        listed = db.execute("pragma database_list").fetchall()
        db.execute("select count(*) from sqlite_master").fetchall()
    except sqlite3.Error:
        return None
    try:
        db.execute("pragma user_version = 7")
        writes = True
    except sqlite3.OperationalError:
        writes = False
    db.close()
    created = set(os.listdir(directory)) - before
    side = any(name.endswith(("-wal", "-shm")) for name in created)
    name = listed[0][2]
    # The unix VFS report the full path of the file; memdb the bare name of a memory database.
    return (name if name.startswith("/") else None), writes, side


def expected(parse_result: object, directory: Path) -> tuple[str | None, bool, bool] | None:
    if parse_result is None:
        return None
    path, writes, side_files, _vfs = parse_result  # type: ignore[misc]
    if path is None:
        return None, True, False  # an in-memory database: writable, no file
    full = os.path.normpath(os.path.join(directory, path))
    wal = os.path.exists(full) and is_wal_database(Path(full).read_bytes()[:100])
    return full, writes, (not writes and side_files and wal)


@pytest.mark.parametrize("template", URIS)
def test_guard_reads_uris_as_sqlite_does(
    template: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    with sqlite3.connect(tmp_path / "plain.db") as db:
        db.execute("create table t(x)")
    db.close()
    wal = sqlite3.connect(tmp_path / "wal.db")
    wal.execute("pragma journal_mode=wal")
    wal.execute("create table t(x)")
    wal.commit()
    wal.close()
    for name in os.listdir(tmp_path):
        if name.endswith(("-wal", "-shm")):
            os.unlink(tmp_path / name)
    uri = template.format(cwd=tmp_path)
    parsed = build_uri_parser()(uri)
    # The guard's expectation is computed before SQLite touches the directory.
    want = expected(parsed, tmp_path)
    seen = observe(tmp_path, uri)
    if template in STRICTER:
        # SQLite opens nothing; the guard judges a file (an unknown VFS as a write, a
        # read-only open of a file that does not exist as a read): stricter, never wider.
        assert seen is None and want is not None, (seen, parsed)
        return
    assert seen == want, parsed


#: URIs SQLite refuses to open for a reason the guard does not reproduce.
STRICTER = {"file:plain.db?vfs=no-such-vfs", "file:new.db?mode=ro"}


def test_wal_header() -> None:
    head = b"SQLite format 3\0" + bytes([16, 0, 2, 2]) + bytes(80)
    assert is_wal_database(head)
    assert not is_wal_database(head[:18] + bytes([1, 1]) + head[20:])
    assert not is_wal_database(b"SQLite format 3\0")
    assert not is_wal_database(b"not a database at all" * 5)
