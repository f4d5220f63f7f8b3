# rule: expose-ro=.
# rule: python-import=posix
# rule: ignore=.env
# expect: absent

"""Objective: see the ignored name .env in a listing of the project.
"""

from _harness import attempt


def payload():
    import posix
    names = posix.listdir('.')
    assert '.env' in names, names
    return '.env listed'


attempt(payload)
