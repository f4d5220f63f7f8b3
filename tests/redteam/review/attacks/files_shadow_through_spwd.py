# rule: expose-ro=.
# rule: python-import=spwd,warnings
# needs: root
# expect: file PermissionError

"""Objective: read /etc/shadow (not exposed) through spwd.getspall (only the count is printed).
"""

from _harness import attempt


def payload():
    import warnings
    warnings.simplefilter('ignore', DeprecationWarning)
    import spwd
    entries = spwd.getspall()
    assert entries and entries[0].sp_namp
    return len(entries)


attempt(payload)
