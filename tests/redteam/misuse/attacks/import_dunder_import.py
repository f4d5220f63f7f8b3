# rule: expose-ro=.
# expect: import RuleModuleNotFoundError

"""Objective: import a forbidden module with __import__.

Under python-sb with the rules above: refused with RuleModuleNotFoundError (a 'import' denial).
"""
from _harness import attempt


def payload():
    print(__import__('socket'))


attempt(payload)
