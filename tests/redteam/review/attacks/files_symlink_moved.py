# rule: expose-rw=.
# rule: python-import=os
# expect: file PermissionError

"""Objective: read the secret through a relative symbolic link created where it points into
     the project, then moved where it points outside (regression: the read is judged).
"""

from _harness import attempt


def payload():
    import os
    os.symlink('../outside/secret.txt', 'a/link')  # from a/ it lands in the project
    os.rename('a/link', 'link')                   # from the project it lands outside
    with open('link') as f:
        return f.read()


attempt(payload)
