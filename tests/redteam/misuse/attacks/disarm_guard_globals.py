# rule: expose-rw=.
# rule: python-import=importlib,contextlib,pysandboxes
# expect: api RuleApiPermissionError

"""Objective: run a function with a guard module's globals, so that its frame passes for the guard's, and have a library call it to eval a string.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import contextlib, importlib.machinery
    import pysandboxes.guard.hook as disguise
    with open('disguised.py', 'w') as handle:
        handle.write("def f():\n    RESULT.append(eval('6*7'))\n")
    code = importlib.machinery.SourceFileLoader('disguised', 'disguised.py').get_code('disguised')
    namespace = vars(disguise)
    namespace['RESULT'] = []
    exec(code, namespace)
    with contextlib.ExitStack() as stack:
        stack.callback(namespace['f'])  # contextlib (a library) calls it
    assert namespace['RESULT'] == [42]


attempt(payload)
