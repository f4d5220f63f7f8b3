# rule: expose-ro=.
# rule: python-import=importlib
# expect: import ModuleNotFoundError
# bypass: importlib.import_module of a C built-in module already in sys.modules (posix, _imp, marshal...) raises no import event and calls no __import__, so it needs no python-import rule (nor does sys.modules['posix']); built-ins stay in sys.modules for the interpreter and the wrappers

"""Objective: get the built-in module posix by name with no python-import rule for it.
"""

from _harness import attempt


def payload():
    import importlib
    return importlib.import_module("posix").getcwd()


attempt(payload)
