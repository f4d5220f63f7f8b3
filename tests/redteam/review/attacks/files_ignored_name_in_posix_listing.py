# rule: expose-ro=.
# rule: ignore=.env
# expect: absent
# bypass: the listing filter wraps os.listdir/os.scandir only; posix.listdir (posix stays loaded: no import rule) lists an ignored name, against SPEC 3.1 'also in directory listings'

"""Objective: see the ignored name .env in a listing of the project.
"""

from _harness import attempt


def payload():
    import posix
    names = posix.listdir('.')
    assert '.env' in names, names
    return '.env listed'


attempt(payload)
