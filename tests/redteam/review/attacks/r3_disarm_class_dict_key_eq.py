# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, from the
``__eq__`` of a ``str`` subclass that the hook's path code calls while judging an ``open``
event. No rule but the file exposure (``_io`` comes from ``sys.modules``).

``io.FileIO(obj)`` raises the ``open`` event with the object itself. The hook's ``text_of``
finds no ``str``/``bytes``/``int`` in its MRO and asks ``pathlib_text`` whether it is a genuine
``pathlib`` path: ``"__fspath__" in namespace`` for each class dict of the MRO. A class dict
may hold a key that is a ``str`` *subclass* (``type('P', (), {Key('__fspath__'): f})``): its
hash is that of ``"__fspath__"``, so the dict lookup compares the two with ``Key.__eq__`` --
program code, inside the hook (the class's ``__fspath__`` works as usual for CPython, whose
own lookup calls the same ``__eq__`` before the event).

``__eq__`` resumes a generator that took its own frame earlier (``sys._getframe()`` with no
guard frame among its callers: allowed): the kept frame's ``f_back`` chain (no audit event)
reaches ``_hook_body``, whose ``f_locals`` (no event) hold ``get``, the bound ``dict.get`` of
the dispatch table.
"""

from _harness import attempt


def payload():
    import sys

    _io = sys.modules['_io']
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

    class Key(str):
        __hash__ = str.__hash__

        def __eq__(self, other):
            if not found:
                next(walker)
            return str.__eq__(self, other)

    def fspath(self):
        return 'data.txt'

    Path = type('Path', (), {Key('__fspath__'): fspath})
    try:
        _io.FileIO(Path(), 'r').close()
    except Exception:  # refused: not a genuine pathlib path
        pass
    for get in found[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data, len(found)


attempt(payload)
