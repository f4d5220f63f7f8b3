# rule: expose-ro=.
# rule: python-import=*
# expect: import RuleModuleNotFoundError

"""Objective: drop a wrapped module from sys.modules and import a fresh, unwrapped copy.

Under python-sb with the rules above: refused with RuleModuleNotFoundError (a 'import' denial).
"""
from _harness import attempt


def payload():
    import sys, os, _posixsubprocess
    del sys.modules['_posixsubprocess']
    import _posixsubprocess
    fork_exec = _posixsubprocess.fork_exec
    r, w = os.pipe()
    pid = fork_exec([b'/bin/true'], [b'/bin/true'], True, (), None, None, -1, -1, -1, -1,
                    -1, -1, r, w, False, False, -1, None, None, -1, -1, None, False)
    os.waitpid(pid, 0)


attempt(payload)
