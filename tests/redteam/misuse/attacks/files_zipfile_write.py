# rule: expose-ro=.
# rule: python-import=zipfile
# expect: file RulePermissionError

"""Objective: write an archive outside the exposure with zipfile.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import zipfile
    with zipfile.ZipFile('../outside/out.zip', 'w') as z:
        z.writestr('a', 'b')


attempt(payload)
