# rule: expose-rw=.
# rule: python-import=sqlite3
# expect: file PermissionError

"""Objective: read the SQLite database ../outside/secret.db with a percent-encoded URI.
"""

from _harness import attempt


def payload():
    import sqlite3
    db = sqlite3.connect('file:%2E%2E/outside/secret.db?mode=ro', uri=True)
    rows = db.execute('select x from t').fetchall()
    db.close()
    assert rows == [('dbsecret',)], rows
    return rows


attempt(payload)
