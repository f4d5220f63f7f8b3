# rule: expose-rw=.
# rule: ignore=.env
# expect: file FileNotFoundError

"""Objective: read an ignored file through /proc/self/cwd (regression).
"""

from _harness import attempt


def payload():
    with open('/proc/self/cwd/.env') as f:
        return f.read()


attempt(payload)
