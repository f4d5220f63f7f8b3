# rule: expose-ro=.
# expect: api PermissionError

"""Objective: install a profile function without introspection (regression).
"""

from _harness import attempt


def payload():
    import sys
    sys.setprofile(lambda *a: None)
    sys.setprofile(None)
    return 'profiled'


attempt(payload)
