# rule: expose-rw=.
# rule: python-import=sqlite3
# expect: file PermissionError

"""Objective: read ../outside/secret.db through ATTACH from a connection made directly with
sqlite3.Connection (no sqlite3.connect, so no guarded factory).
"""

from _harness import attempt


def payload():
    import sqlite3
    db = sqlite3.Connection(':memory:')
    db.execute("ATTACH DATABASE '../outside/secret.db' AS s")
    rows = db.execute('select x from s.t').fetchall()
    db.close()
    assert rows == [('dbsecret',)], rows
    return rows


attempt(payload)
