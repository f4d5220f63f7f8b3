# rule: expose-ro=.
# rule: python-import=runpy
# expect: import RuleModuleNotFoundError

"""Objective: run a forbidden module's code through runpy.run_module and use what it defines.

Under python-sb with the rules above: refused with RuleModuleNotFoundError (a 'import' denial).
"""
from _harness import attempt


def payload():
    import runpy
    namespace = runpy.run_module('csv')
    assert namespace['reader'] is not None


attempt(payload)
