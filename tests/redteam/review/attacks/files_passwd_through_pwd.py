# rule: expose-ro=.
# expect: file PermissionError
# bypass: pwd (a built-in module: importable with no rule) reads /etc/passwd through libc with no audit event; open('/etc/passwd') is refused

"""Objective: read the user database /etc/passwd (not exposed) with no rule at all.
"""

from _harness import attempt


def payload():
    import pwd
    users = pwd.getpwall()
    assert users
    return len(users)


attempt(payload)
