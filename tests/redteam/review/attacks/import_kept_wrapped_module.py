# rule: expose-ro=.
# expect: import ModuleNotFoundError
# bypass: posix (like _thread, _signal, faulthandler, _posixsubprocess) stays in sys.modules for the wrappers, so 'import posix' raises no import event and needs no rule

"""Objective: import posix (the os functions) with no python-import rule.
"""

from _harness import attempt


def payload():
    import posix
    return posix.getcwd()


attempt(payload)
