# rule: expose-ro=.
# rule: python-import=sqlite3
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, from a
metaclass ``__getattribute__`` that the hook's SQLite handler calls while refusing a
connection. Rules: the file exposure and ``import sqlite3``.

A connection made other than by ``sqlite3.connect`` (``sqlite3.Connection(...)`` directly) is
refused at the ``sqlite3.connect/handle`` event; to word the refusal, ``on_sqlite_handle``
reads ``getattr(type(connection), "__qualname__", "?")`` -- an attribute read on the
*program's* class, which goes through its metaclass's ``__getattribute__``: program code,
under ``on_sqlite_handle`` and ``_hook_body``.

It resumes a generator that took its own frame earlier (``sys._getframe()`` with no guard
frame among its callers: allowed): the kept frame's ``f_back`` chain (no audit event) reaches
``_hook_body``, whose ``f_locals`` (no event) hold ``get``, the bound ``dict.get`` of the
dispatch table.
"""

from _harness import attempt


def payload():
    import sqlite3
    import sys

    found = []

    def spy():
        me = sys._getframe()
        while True:
            yield
            frame = me.f_back
            while frame is not None:
                names = frame.f_locals
                if 'get' in names and 'strip' in names:
                    found.append(names['get'])
                    break
                frame = frame.f_back

    walker = spy()
    next(walker)

    class Meta(type):
        def __getattribute__(cls, name):
            if name == '__qualname__' and not found:
                next(walker)
            return type.__getattribute__(cls, name)

    class Conn(sqlite3.Connection, metaclass=Meta):
        pass

    try:
        Conn(':memory:').close()  # refused by python-sb; fine under plain python3
    except Exception:
        pass
    for get in found[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data, len(found)


attempt(payload)
