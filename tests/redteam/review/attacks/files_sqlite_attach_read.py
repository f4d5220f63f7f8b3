# rule: expose-rw=.
# rule: python-import=sqlite3
# expect: file PermissionError

"""Objective: read ../outside/secret.db through ATTACH DATABASE on an in-memory connection.
"""

from _harness import attempt


def payload():
    import sqlite3
    db = sqlite3.connect(':memory:')
    db.execute("ATTACH DATABASE '../outside/secret.db' AS s")
    rows = db.execute('select x from s.t').fetchall()
    db.close()
    assert rows == [('dbsecret',)], rows
    return rows


attempt(payload)
