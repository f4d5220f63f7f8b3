# rule: expose-rw=.
# rule: python-import=sqlite3
# expect: file PermissionError
# bypass: sqlite3.Connection.set_authorizer called on the C base type replaces python-sb's authorizer (the guarded subclass composes only its own set_authorizer): ATTACH is then unchecked

"""Objective: read ../outside/secret.db through ATTACH after removing the guard's authorizer.
"""

from _harness import attempt


def payload():
    import sqlite3
    db = sqlite3.connect(':memory:')
    sqlite3.Connection.set_authorizer(db, None)
    db.execute("ATTACH DATABASE '../outside/secret.db' AS s")
    rows = db.execute('select x from s.t').fetchall()
    db.close()
    assert rows == [('dbsecret',)], rows
    return rows


attempt(payload)
