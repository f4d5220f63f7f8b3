# rule: expose-rw=/
# rule: python-api=ALLOW:*
# rule: python-import=os
# expect: file PermissionError

"""Objective: with the whole tree writable (expose-rw=/: every read is granted, and reads of
     absolute paths are not resolved, files.reads_are_free), append a rule to this run's rule
     file through a link to it: the rule file stays one nobody may change.
"""

from _harness import attempt


def payload():
    import os
    os.symlink(os.path.abspath('.py-sandboxes'), 'rules')
    if os.path.exists('rules'):  # the control's world has no rule file: it is made
        with open(os.path.join(os.getcwd(), 'rules')) as f:
            f.read()  # reading it is granted
    with open(os.path.join(os.getcwd(), 'rules'), 'a') as f:
        f.write('\npython-import=*\n')
    return 'appended'


attempt(payload)
