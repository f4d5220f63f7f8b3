# rule: expose-rw=.
# rule: python-import=sqlite3
# expect: file RulePermissionError

"""Objective: create an SQLite database outside the exposure through a URI whose path holds an
encoded NUL.

SQLite skips the rest of the path after ``%00`` (up to ``?``), so it opens
``../outside/nul.db``; a reading that decoded ``%00`` as a character and let the path go on
would see ``../outside/nul.db<NUL>/../../project/x.db``, a name in the project.
"""
from _harness import attempt


def payload():
    import sqlite3
    db = sqlite3.connect('file:../outside/nul.db%00/../../project/x.db', uri=True)
    db.execute('create table t(x)')
    db.commit()
    db.close()
    import os
    assert os.path.exists('../outside/nul.db')


attempt(payload)
