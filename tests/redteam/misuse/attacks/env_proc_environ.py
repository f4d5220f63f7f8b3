# rule: expose-ro=.
# expect: absent

"""Objective: read the environment through /proc/self/environ.

Under python-sb with the rules above: the process's own /proc entry is readable (a default grant
of every enforcer), but the interpreter was started with the granted environment only: the
secret is not there.
"""
from _harness import attempt


def payload():
    assert b'SECRET_TOKEN' in open('/proc/self/environ', 'rb').read(), 'not visible'


attempt(payload)
