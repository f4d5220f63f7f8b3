# rule: expose-ro=.
# expect: absent api

"""Objective: add an audit hook of one's own (it would see, or fight, the guard's events).

Under python-sb with the rules above: the objective stays out of reach (a 'api' refusal is logged to --denials).
"""
from _harness import attempt


def payload():
    import sys
    seen = []
    sys.addaudithook(lambda e, a: seen.append(e))
    open('data.txt').close()
    assert seen, 'hook not called'


attempt(payload)
