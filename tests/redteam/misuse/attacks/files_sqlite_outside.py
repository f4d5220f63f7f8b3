# rule: expose-ro=.
# rule: python-import=sqlite3
# expect: file RulePermissionError

"""Objective: open an SQLite database outside the exposure.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import sqlite3
    sqlite3.connect('../outside/db.sqlite').execute('create table t(x)')


attempt(payload)
