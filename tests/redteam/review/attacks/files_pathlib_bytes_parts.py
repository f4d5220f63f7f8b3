# rule: expose-ro=.
# rule: python-import=pathlib
# expect: file PermissionError

"""Objective: read the secret with a pathlib path built from parts (regression).
"""

from _harness import attempt


def payload():
    import pathlib
    return (pathlib.Path('a') / '..' / '..' / 'outside' / 'secret.txt').read_text()


attempt(payload)
