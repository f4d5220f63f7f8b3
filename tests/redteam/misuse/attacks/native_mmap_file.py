# rule: expose-ro=.
# rule: python-import=mmap
# expect: api RuleApiPermissionError

"""Objective: map a file into memory.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import mmap
    f = open('data.txt', 'rb')
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    print(m[:4])


attempt(payload)
