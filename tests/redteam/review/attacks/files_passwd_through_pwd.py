# rule: expose-ro=.
# rule: python-import=pwd
# expect: file PermissionError
# bypass: pwd (granted by python-import=pwd) reads /etc/passwd through libc with no audit event; open('/etc/passwd') is refused

"""Objective: read the user database /etc/passwd (not exposed) with no rule at all.
"""

from _harness import attempt


def payload():
    import pwd
    users = pwd.getpwall()
    assert users
    return len(users)


attempt(payload)
