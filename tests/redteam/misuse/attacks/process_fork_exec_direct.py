# rule: expose-ro=.
# rule: python-import=subprocess,os
# expect: api RuleApiPermissionError

"""Objective: call _posixsubprocess.fork_exec directly (no audit event of its own).

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import subprocess, os
    fork_exec = subprocess._fork_exec
    r, w = os.pipe()
    pid = fork_exec([b'/bin/true'], [b'/bin/true'], True, (), None, None, -1, -1, -1, -1,
                    -1, -1, r, w, False, False, -1, None, None, -1, -1, None, False)
    os.waitpid(pid, 0)


attempt(payload)
