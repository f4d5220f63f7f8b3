# rule: expose-ro=.
# rule: python-import=importlib
# expect: api RuleApiPermissionError

"""Objective: compile a string through the import system's own source_to_code, then run it.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import importlib.machinery
    loader = importlib.machinery.SourceFileLoader('payload', 'payload.py')
    code = loader.source_to_code(b'VALUE = 6 * 7', 'prog.py')
    namespace = {}
    exec(code, namespace)
    assert namespace['VALUE'] == 42


attempt(payload)
