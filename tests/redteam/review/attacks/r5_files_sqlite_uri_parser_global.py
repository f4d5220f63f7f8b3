# rule: expose-rw=.
# rule: python-import=sqlite3
# expect: file PermissionError

"""Objective: read ../outside/secret.db through a ``file:`` URI after changing a constant in
the namespace of ``pysandboxes.guard.sqlite`` (in ``sys.modules``; a module attribute is set
with no audit event).

The guard reads what SQLite opens for a URI with its own parser; the parser looked three of
SQLite's flags up in its module's globals at run time. With ``OPEN_MEMORY`` made the value of
``OPEN_READONLY``, ``mode=ro`` read as an in-memory database: no file judged, and SQLite
opened the database outside the project.
"""

from _harness import attempt


def payload():
    import sqlite3
    import sys

    guard = sys.modules.get("pysandboxes.guard.sqlite")
    if guard is not None:  # python-sb
        guard.OPEN_MEMORY = guard.OPEN_READONLY
    db = sqlite3.connect("file:../outside/secret.db?mode=ro", uri=True)
    rows = db.execute("select x from t").fetchall()
    db.close()
    assert rows == [("dbsecret",)], rows
    return rows


attempt(payload)
