# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, from a
metaclass ``__getattribute__`` that the hook's file handler calls while refusing a path
object it cannot read. No rule but the file exposure (``_io`` comes from ``sys.modules``).

``io.FileIO(obj)`` raises the ``open`` event with the object itself (CPython has called its
``__fspath__`` already). The hook's ``text_of`` accepts ``str``, ``bytes``, ints and genuine
``pathlib`` paths only; anything else goes to ``unsupported(obj)``, which words its refusal
with ``type(obj).__qualname__`` -- an attribute read on the *program's* class, through its
metaclass's ``__getattribute__``: program code, under ``on_open`` and ``_hook_body``.

It resumes a generator that took its own frame earlier (``sys._getframe()`` with no guard
frame among its callers: allowed): the kept frame's ``f_back`` chain (no audit event) reaches
``_hook_body``, whose ``f_locals`` (no event) hold ``get``, the bound ``dict.get`` of the
dispatch table.
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

    class Meta(type):
        def __getattribute__(cls, name):
            if name == '__qualname__' and not found:
                next(walker)
            return type.__getattribute__(cls, name)

    class Path(metaclass=Meta):
        # Not a plain function: the hook's pathlib check would read its __code__ (refused
        # as introspection before unsupported() is reached).
        __fspath__ = staticmethod(lambda: 'data.txt')

    try:
        _io.FileIO(Path(), 'r').close()  # refused by python-sb; fine under plain python3
    except Exception:
        pass
    for get in found[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data, len(found)


attempt(payload)
