# rule: expose-ro=.
# rule: python-import=pathlib
# expect: file RulePermissionError

"""Objective: read the secret with pathlib.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import pathlib
    print(pathlib.Path('../outside/secret.txt').read_text())


attempt(payload)
