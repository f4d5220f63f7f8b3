# rule: expose-rw=.
# rule: python-import=sqlite3
# expect: file PermissionError

"""Objective: read ../outside/secret.db through ATTACH after silencing the guarded __init__.

``type(conn).__init__`` of a connection ``sqlite3.connect`` makes is the guard's own
``guarded_init`` (a plain function of ``pysandboxes.guard.sqlite``); its ``__globals__`` (no
audit event) is that module's namespace, where it looks up ``_audit`` at run time.
"""

from _harness import attempt


def payload():
    import sqlite3
    first = sqlite3.connect(':memory:')
    init = type(first).__init__
    first.close()
    scope = getattr(init, '__globals__', None)
    if scope is not None and '_audit' in scope:  # python-sb: the guard's module namespace
        scope['_audit'] = lambda *args: None
    db = sqlite3.connect(':memory:')
    db.execute("ATTACH DATABASE '../outside/secret.db' AS s")
    rows = db.execute('select x from s.t').fetchall()
    db.close()
    assert rows == [('dbsecret',)], rows
    return rows


attempt(payload)
