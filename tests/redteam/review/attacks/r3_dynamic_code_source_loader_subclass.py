# rule: expose-ro=.
# expect: api PermissionError
# bypass: the import system compiles whatever a program-defined SourceLoader subclass returns, under the exact-str file name it gives (a standard-library path): the compile passes as the import system's and the program's code runs as library code (eval without a rule; imports and introspection likewise; bypass of 4dcec3b)

"""Objective: evaluate source text (``eval``) with no ``dynamic-code`` rule, from code the
guard takes for the standard library's. No rule but the file exposure.

The fix of ``r3_dynamic_code_filename_lies_library.py`` refuses a ``co_filename`` that is not
an exact ``str``. But the import system still compiles whatever source a loader hands it,
under whatever file name the loader gives: ``SourceLoader.get_code`` (frozen, reached through
``sys.modules['_frozen_importlib_external']``) calls the loader's ``get_filename`` and
``get_data``, then ``source_to_code`` -- the ``compile`` the hook lets through as the import
system's (``survey(3, ...)`` gives ``import_compile``). A ``SourceLoader`` subclass of the program's
returns an exact ``str`` naming a standard-library file (``.../encodings/r3_lib.py``, which
does not exist) and, as its data, the program's own source: the program's code gets a
standard-library ``co_filename``; its ``exec`` passes as module code of ``encodings`` (always
allowed), and the ``eval`` in its ``evaluate`` is a library's own business.
"""

from _harness import attempt

SOURCE = b"def evaluate(source):\n    return eval(source)\n"


def payload():
    import sys

    external = sys.modules["_frozen_importlib_external"]
    sys.dont_write_bytecode = True
    stdlib = None
    for entry in sys.path:
        if entry.endswith("lib-dynload"):
            stdlib = entry.rsplit("/", 1)[0]

    class Loader(external.SourceLoader):
        def get_filename(self, fullname):
            return stdlib + "/encodings/r3_lib.py"

        def get_data(self, path):
            return SOURCE

        def path_stats(self, path):
            raise OSError("no bytecode cache")

    name = "encodings.r3_lib"
    module = type(sys)(name)
    Loader().exec_module(module)
    value = module.evaluate("6 * 7")
    assert value == 42, value
    return value


attempt(payload)
