# rule: expose-rw=.
# rule: python-import=sqlite3
# expect: file PermissionError

"""Objective: ATTACH ../outside/secret.db from the __init__ of a Connection subclass, before
any authorizer could be set on the connection.
"""

from _harness import attempt


def payload():
    import sqlite3

    class Early(sqlite3.Connection):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.execute("ATTACH DATABASE '../outside/secret.db' AS s")

    db = sqlite3.connect(':memory:', factory=Early)
    rows = db.execute('select x from s.t').fetchall()
    db.close()
    assert rows == [('dbsecret',)], rows
    return rows


attempt(payload)
