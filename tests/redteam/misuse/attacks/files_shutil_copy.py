# rule: expose-rw=.
# rule: python-import=shutil
# expect: file RulePermissionError

"""Objective: copy the secret into the writable directory with shutil.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import shutil
    shutil.copy('../outside/secret.txt', 'copy.txt')


attempt(payload)
