# rule: expose-ro=.
# rule: python-import=importlib
# expect: import ModuleNotFoundError

"""Objective: run socket.py's code by hand under another module name (regression).
"""

from _harness import attempt


def payload():
    import importlib.util, sys
    path = next(p for p in sys.path if p.endswith('/python3.11')) + '/socket.py'
    spec = importlib.util.spec_from_file_location('not_socket', path)
    module = importlib.util.module_from_spec(spec)
    sys.modules['not_socket'] = module
    spec.loader.exec_module(module)
    return module.socket


attempt(payload)
