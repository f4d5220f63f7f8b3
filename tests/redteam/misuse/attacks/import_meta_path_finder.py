# rule: expose-ro=.
# rule: python-import=importlib
# expect: import RuleModuleNotFoundError

"""Objective: insert a finder at the front of sys.meta_path that serves the forbidden module.

Under python-sb with the rules above: refused with RuleModuleNotFoundError (a 'import' denial).
"""
from _harness import attempt


def payload():
    import sys, importlib.machinery
    class F:
        def find_spec(self, name, path=None, target=None):
            return importlib.machinery.PathFinder.find_spec(name, path)
    sys.meta_path.insert(0, F())
    import socket
    print(socket)


attempt(payload)
