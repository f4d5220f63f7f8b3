# rule: expose-rw=.
# rule: ignore=.env
# rule: python-import=shutil
# expect: file FileNotFoundError

"""Objective: copy an ignored file and read the copy (regression).
"""

from _harness import attempt


def payload():
    import shutil
    shutil.copy('.env', 'copy.txt')
    return open('copy.txt').read()


attempt(payload)
