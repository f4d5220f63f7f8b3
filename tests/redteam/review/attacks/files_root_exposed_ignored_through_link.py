# rule: expose-ro=/
# rule: expose-rw=.
# rule: ignore=.env
# rule: python-api=ALLOW:*
# rule: python-import=os
# expect: file FileNotFoundError

"""Objective: with every read granted (expose-ro=/) but an ignore= rule, read the ignored
     file through an absolute path that passes a link to its directory: reads are resolved as always then (the
     shortcut of files.reads_are_free needs a table with no ignore= rule).
"""

from _harness import attempt


def payload():
    import os
    os.symlink(os.getcwd(), 'here')  # a link to this directory, read through it
    with open(os.path.join(os.getcwd(), 'here', '.env')) as f:
        return f.read()


attempt(payload)
