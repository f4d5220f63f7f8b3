# rule: expose-rw=.
# rule: python-import=sqlite3,os
# expect: file PermissionError

"""Objective: create a file in ../outside with VACUUM INTO and a bound parameter (the name
is evaluated when the statement runs).
"""

from _harness import attempt


def payload():
    import os, sqlite3
    db = sqlite3.connect(':memory:')
    db.execute('create table z(a)')
    db.execute('VACUUM INTO ?', ('../outside/written.db',))
    db.close()
    assert os.path.exists('../outside/written.db')
    return 'written'


attempt(payload)
