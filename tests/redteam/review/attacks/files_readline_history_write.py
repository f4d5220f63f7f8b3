# rule: expose-ro=.
# rule: python-import=readline,os
# expect: file PermissionError

"""Objective: create a file in ../outside (not exposed) with readline.write_history_file.
"""

from _harness import attempt


def payload():
    import os, readline
    readline.add_history('written by the sandboxed program')
    readline.write_history_file('../outside/history')
    assert os.path.exists('../outside/history')
    return 'written'


attempt(payload)
