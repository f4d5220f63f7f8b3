# rule: expose-ro=.
# rule: python-import=importlib,os,sys
# expect: import RuleModuleNotFoundError

"""Objective: load a forbidden module's source by hand and use it.

Under python-sb with the rules above: refused with RuleModuleNotFoundError (a 'import' denial).
"""
from _harness import attempt


def payload():
    import importlib.util, os, sys
    path = os.path.join(os.path.dirname(os.path.dirname(importlib.__file__)), 'socket.py')
    spec = importlib.util.spec_from_file_location('socket_copy', path)
    m = importlib.util.module_from_spec(spec)
    sys.modules['socket_copy'] = m
    spec.loader.exec_module(m)
    print(m.socket)


attempt(payload)
