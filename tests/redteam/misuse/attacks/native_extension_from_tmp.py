# rule: expose-ro=.
# rule: python-import=importlib,shutil,tempfile,os,_json
# expect: api RuleApiPermissionError

"""Objective: load a compiled extension module copied to a writable directory.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import importlib.machinery, importlib.util, shutil, tempfile, os, _json
    src = _json.__file__
    dst = os.path.join(tempfile.mkdtemp(), os.path.basename(src))
    shutil.copy(src, dst)
    loader = importlib.machinery.ExtensionFileLoader('_json', dst)
    spec = importlib.util.spec_from_file_location('_json', dst, loader=loader)
    print(importlib.util.module_from_spec(spec))


attempt(payload)
