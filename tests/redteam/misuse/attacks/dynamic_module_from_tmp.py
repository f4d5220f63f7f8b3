# rule: expose-ro=.
# rule: python-import=importlib,tempfile,os
# expect: api RuleApiPermissionError

"""Objective: write a module at run time in the temp directory and import it.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import importlib.util, tempfile, os
    d = tempfile.mkdtemp()
    path = os.path.join(d, 'payload.py')
    open(path, 'w').write('VALUE = 42\n')
    spec = importlib.util.spec_from_file_location('payload', path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.VALUE == 42


attempt(payload)
