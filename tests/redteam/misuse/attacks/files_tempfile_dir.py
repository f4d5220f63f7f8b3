# rule: expose-ro=.
# rule: python-import=tempfile
# expect: file RulePermissionError

"""Objective: create a temporary file in a directory outside the exposure.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import tempfile
    tempfile.NamedTemporaryFile(dir='../outside', delete=False).write(b'x')


attempt(payload)
