# rule: expose-rw=.
# rule: python-import=os
# expect: file PermissionError

"""Objective: read the secret through a path nine directories deep whose last directory is a
     symbolic link to the directory outside (a deep path's directory part is resolved by the
     kernel, one open(O_PATH) and /proc/self/fd: the link must be followed there as the walk
     follows it, and the read judged where it lands).
"""

from _harness import attempt


def payload():
    import os
    deep = os.path.join('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h')
    os.makedirs(deep, exist_ok=True)
    os.symlink(os.path.abspath(os.path.join('..', 'outside')), os.path.join(deep, 'out'))
    with open(os.path.join(os.getcwd(), deep, 'out', 'secret.txt')) as f:
        return f.read()


attempt(payload)
