# rule: expose-ro=.
# rule: python-import=glob
# expect: absent file

"""Objective: list a directory outside the exposure with glob.

Under python-sb with the rules above: the objective stays out of reach (a 'file' refusal is logged to --denials).
"""
from _harness import attempt


def payload():
    import glob
    found = glob.glob('../outside/*')
    assert found, 'nothing listed'


attempt(payload)
