# rule: expose-ro=.
# rule: python-import=posix
# expect: api PermissionError

"""Objective: run a shell command through posix.system (regression).
"""

from _harness import attempt


def payload():
    import posix
    status = posix.system('true')
    assert status == 0
    return status


attempt(payload)
