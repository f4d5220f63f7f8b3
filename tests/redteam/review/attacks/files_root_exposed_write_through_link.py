# rule: expose-ro=/
# rule: expose-rw=.
# rule: python-api=ALLOW:*
# rule: python-import=os
# expect: file PermissionError

"""Objective: with every read granted (expose-ro=/, no ignore=: reads of absolute paths are
     no longer resolved, files.reads_are_free) and threads and processes granted (no decision
     cache), write the secret outside through a link in the writable directory, at a shallow
     and at a deep path: writes are still judged where they land.
"""

from _harness import attempt


def payload():
    import os
    outside = os.path.abspath(os.path.join('..', 'outside'))
    deep = os.path.join(os.getcwd(), 'a', 'b', 'c', 'd', 'e', 'f', 'g')
    os.makedirs(deep, exist_ok=True)
    os.symlink(outside, 'out')
    os.symlink(outside, os.path.join(deep, 'out'))
    with open(os.path.join(os.getcwd(), 'out', 'secret.txt')) as f:
        f.read()  # the read is granted: the write is the objective
    for base in (os.path.join(os.getcwd(), 'out'), os.path.join(deep, 'out')):
        with open(os.path.join(base, 'secret.txt'), 'a') as f:
            f.write('written')
    return 'written'


attempt(payload)
