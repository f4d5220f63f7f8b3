# rule: expose-ro=.
# rule: python-import=importlib
# expect: import ModuleNotFoundError

"""Objective: run socket.py's code by hand under another module name (regression).
"""

from _harness import attempt


def payload():
    import importlib.util, sys
    stdlib = '/python%d.%d' % sys.version_info[:2]
    path = next(p for p in sys.path if p.endswith(stdlib)) + '/socket.py'
    spec = importlib.util.spec_from_file_location('not_socket', path)
    module = importlib.util.module_from_spec(spec)
    sys.modules['not_socket'] = module
    spec.loader.exec_module(module)
    return module.socket


attempt(payload)
