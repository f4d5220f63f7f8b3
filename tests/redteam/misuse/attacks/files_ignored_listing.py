# rule: expose-rw=.
# rule: ignore=.env
# rule: python-import=os
# expect: absent

"""Objective: learn that the ignored file exists from a directory listing or stat.

Under python-sb with the rules above: the objective stays out of reach.
"""
from _harness import attempt


def payload():
    import os
    assert '.env' in os.listdir('.') or os.path.exists('.env'), 'not visible'


attempt(payload)
