# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, from the
``__hash__`` of a ``str`` subclass that ends up as a code object's ``co_filename``. No rule but
the file exposure (the import system's loader comes from ``sys.modules``).

The guard identifies code by ``co_filename`` ("which the program cannot forge without
``compile`` or ``code.replace``") and keeps it in caches. But the import system compiles for
anyone: ``SourceFileLoader(name, path).exec_module(module)`` with ``path`` a ``str`` subclass
reads the file (an ``open`` event, judged on an exact copy: the project's own ``_harness.py``)
and compiles it through ``source_to_code`` -- the ``compile`` the hook lets through as the
import system's -- and CPython keeps the subclass object itself as ``co_filename``. The module
body then raises ``exec``: the hook's ``on_exec`` asks ``is_library_file(co_filename)``, a
dict lookup in its cache that calls the subclass's ``__hash__`` -- program code, under
``on_exec`` and ``_hook_body``.

It resumes a generator that took its own frame earlier (``sys._getframe()`` with no guard
frame among its callers: allowed): the kept frame's ``f_back`` chain (no audit event) reaches
``_hook_body``, whose ``f_locals`` (no event) hold ``get``, the bound ``dict.get`` of the
dispatch table.
"""

from _harness import attempt


def payload():
    import sys

    posix = sys.modules['posix']
    external = sys.modules['_frozen_importlib_external']
    sys.dont_write_bytecode = True
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

    class Name(str):
        def __hash__(self):
            if not found:
                next(walker)
            return str.__hash__(self)

    path = Name(posix.getcwd() + '/_harness.py')
    module = type(sys)('r3_harness_copy')
    external.SourceFileLoader('r3_harness_copy', path).exec_module(module)
    for get in found[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data, len(found)


attempt(payload)
