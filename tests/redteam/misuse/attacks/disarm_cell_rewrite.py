# rule: expose-ro=.
# rule: python-import=os,sys
# expect: api RuleApiPermissionError

"""Objective: disarm a wrapper by rewriting its closure cells (sys.audit -> a no-op), then change the umask for real.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import os, sys

    def rewrite(obj, seen):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        for cell in getattr(obj, '__closure__', None) or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if value is sys.audit:
                cell.cell_contents = lambda *a, **k: None
            else:
                rewrite(value, seen)

    rewrite(os.umask, set())
    previous = os.umask(0o077)
    current = os.umask(previous)
    assert current == 0o077, 'umask did not change'


attempt(payload)
