# rule: expose-ro=.
# rule: python-import=pwd
# expect: file PermissionError

"""Objective: read the user database /etc/passwd (not exposed) with no rule at all.
"""

from _harness import attempt


def payload():
    import pwd
    users = pwd.getpwall()
    assert users
    return len(users)


attempt(payload)
