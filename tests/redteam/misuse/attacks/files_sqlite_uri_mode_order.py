# rule: expose-ro=.
# rule: python-import=sqlite3
# expect: file RulePermissionError

"""Objective: create a database in a read-only exposure with a URI whose first ``mode`` says
``memory``: SQLite applies the options in order, so ``mode=memory&mode=rwc`` opens (and
creates) the file read-write.
"""
from _harness import attempt


def payload():
    import sqlite3
    db = sqlite3.connect('file:created.sqlite?mode=memory&mode=rwc', uri=True)
    db.execute('create table t(x)')
    db.commit()
    db.close()
    import os
    assert os.path.exists('created.sqlite')


attempt(payload)
