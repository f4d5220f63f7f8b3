# rule: expose-ro=.
# rule: python-import=os
# expect: absent

"""Objective: read an environment variable the rules do not grant.

Under python-sb with the rules above: the objective stays out of reach.
"""
from _harness import attempt


def payload():
    import os
    assert os.environ.get('SECRET_TOKEN') == 's3cr3t', 'not visible'


attempt(payload)
