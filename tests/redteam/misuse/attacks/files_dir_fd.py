# rule: expose-ro=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: open with dir_fd: the guard must judge the path from that directory, not from the cwd.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import os
    d = os.open('.', os.O_RDONLY)
    os.chdir('a/b')
    fd = os.open('../outside/secret.txt', os.O_RDONLY, dir_fd=d)
    print(os.read(fd, 100))


attempt(payload)
