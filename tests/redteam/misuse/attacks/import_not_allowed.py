# rule: expose-ro=.
# expect: import RuleModuleNotFoundError

"""Objective: import a module no rule allows.

Under python-sb with the rules above: refused with RuleModuleNotFoundError (a 'import' denial).
"""
from _harness import attempt


def payload():
    import socket
    print(socket)


attempt(payload)
