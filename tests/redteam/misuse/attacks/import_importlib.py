# rule: expose-ro=.
# rule: python-import=importlib
# expect: import RuleModuleNotFoundError

"""Objective: import a forbidden module through importlib.import_module.

Under python-sb with the rules above: refused with RuleModuleNotFoundError (a 'import' denial).
"""
from _harness import attempt


def payload():
    import importlib
    print(importlib.import_module('socket'))


attempt(payload)
