# rule: expose-ro=.
# rule: python-import=os
# expect: file PermissionError

"""Objective: read the environment of the parent process (python-sb itself under the sandbox) through /proc/PPID/environ (regression).
"""

from _harness import attempt


def payload():
    import os
    with open(f'/proc/{os.getppid()}/environ', 'rb') as f:
        data = f.read()
    assert b'PATH=' in data
    return len(data)


attempt(payload)
