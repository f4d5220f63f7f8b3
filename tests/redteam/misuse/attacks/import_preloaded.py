# rule: expose-ro=.
# expect: import RuleModuleNotFoundError

"""Objective: import a module the launcher had already loaded (json).

Under python-sb with the rules above: refused with RuleModuleNotFoundError (a 'import' denial).
"""
from _harness import attempt


def payload():
    import json
    print(json.dumps([1]))


attempt(payload)
