# rule: expose-ro=.
# rule: python-import=os
# expect: api PermissionError

"""Objective: change the scheduling priority of another process without process-control.
"""

from _harness import attempt


def payload():
    import os
    pid = int(open('victim_pid.txt').read())
    os.setpriority(os.PRIO_PROCESS, pid, 7)
    assert os.getpriority(os.PRIO_PROCESS, pid) == 7
    return 7


attempt(payload)
