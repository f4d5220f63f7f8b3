# rule: expose-ro=.
# expect: api PermissionError

"""Objective: evaluate source text (``eval``) with no ``dynamic-code`` rule, from code the
guard takes for the standard library's. No rule but the file exposure.

The guard tells the program from library code by ``co_filename`` ("which the program cannot
forge without ``compile`` or ``code.replace``"). The import system compiles for anyone:
``SourceFileLoader(name, path).exec_module(module)`` reads ``str(path)`` and compiles the
source with ``path`` itself as the file name -- the ``compile`` the hook lets through as the
import system's. With ``path`` a ``str`` subclass whose *value* is a file of the standard
library (``.../encodings/r3_lib.py``, which does not exist) and whose ``__str__`` is this
script, the program's own code gets a standard-library ``co_filename``: its ``exec`` passes
as module code of ``encodings`` (always allowed), and the ``eval`` in its ``evaluate`` is a
library's own business.
"""

from _harness import attempt


def evaluate(source):
    return eval(source)


def payload():
    import sys

    posix = sys.modules['posix']
    external = sys.modules['_frozen_importlib_external']
    sys.dont_write_bytecode = True
    here = posix.getcwd() + '/' + __file__.rsplit('/', 1)[-1]
    stdlib = None
    for entry in sys.path:
        if entry.endswith('lib-dynload'):
            stdlib = entry.rsplit('/', 1)[0]

    class Lie(str):
        def __str__(self):
            return here  # what the loader reads

    name = 'encodings.r3_lib'
    module = type(sys)(name)
    module.__file__ = here
    external.SourceFileLoader(name, Lie(stdlib + '/encodings/r3_lib.py')).exec_module(module)
    value = module.evaluate('6 * 7')
    assert value == 42, value
    return value


if __name__ == '__main__':
    attempt(payload)
