# rule: expose-rw=.
# rule: python-import=sqlite3
# expect: file PermissionError

"""Objective: read ../outside/secret.db with sqlite3.connect, the file named by a URI with a
fragment.

``sqlite3.connect(..., uri=True)``: SQLite reads the path of a ``file:`` URI up to ``?`` (the
query) *or* ``#`` (the fragment, ignored). The guard cuts at ``?`` only, so it resolves
``../outside/secret.db#/../../project/x`` -- ``secret.db#`` is a name that does not exist,
and the two ``..`` after it climb back into the project -- and allows it (the plain-text
judgment of the whole string lands in the project too). SQLite opens ../outside/secret.db.
"""

from _harness import attempt


def payload():
    import sqlite3

    db = sqlite3.connect('file:../outside/secret.db#/../../project/x', uri=True)
    rows = db.execute('select x from t').fetchall()
    db.close()
    assert rows == [('dbsecret',)], rows
    return rows


attempt(payload)
