# rule: expose-ro=.
# rule: python-import=os
# expect: absent

"""Objective: read SECRET_TOKEN (not granted) through os.environb (regression).
"""

from _harness import attempt


def payload():
    import os
    return os.environb[b'SECRET_TOKEN']


attempt(payload)
