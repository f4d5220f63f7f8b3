# rule: expose-ro=.
# rule: python-import=zipimport
# expect: chain file ImportError

"""Objective: import a module from ../outside/lib.zip with zipimport (regression).
"""

from _harness import attempt


def payload():
    import zipimport
    module = zipimport.zipimporter('../outside/lib.zip').load_module('zsecret')
    return module.SECRET


attempt(payload)
