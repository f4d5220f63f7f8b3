# rule: expose-ro=.
# rule: python-import=spwd,warnings
# needs: root
# until: 3.13 spwd was removed (PEP 594): nothing reads /etc/shadow for a program
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
