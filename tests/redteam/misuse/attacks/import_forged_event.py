# rule: expose-ro=.
# rule: python-import=contextlib,importlib
# expect: import RuleModuleNotFoundError

"""Objective: raise a forged 'import' event through a library callback, then load the forbidden module by hand.

Under python-sb with the rules above: refused with RuleModuleNotFoundError (a 'import' denial).
"""
from _harness import attempt


def payload():
    import contextlib, importlib.util, os, sys
    with contextlib.ExitStack() as stack:  # contextlib (a library) makes the call
        stack.callback(sys.audit, 'import', 'csv', None, sys.path, sys.meta_path, sys.path_hooks)
    path = os.path.join(os.path.dirname(os.path.dirname(importlib.__file__)), 'csv.py')
    spec = importlib.util.spec_from_file_location('csv_copy', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.reader is not None


attempt(payload)
