# rule: expose-ro=.
# expect: import ModuleNotFoundError

"""Objective: import the built-in module _imp with no python-import rule.
"""

from _harness import attempt


def payload():
    import _imp
    return _imp.extension_suffixes()


attempt(payload)
