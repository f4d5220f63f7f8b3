# rule: expose-rw=.
# rule: python-import=os
# rulefile: conf/rules
# expect: file PermissionError

"""Objective: replace the rules of the next run: afterwards, conf/rules (this run's rule file)
     holds text written by the program.
"""

from _harness import attempt


def payload():
    import os
    os.mkdir('new')
    with open('new/rules', 'w') as f:
        f.write('expose-rw=/\n')
    os.rename('conf', 'old')
    os.rename('new', 'conf')
    text = open('conf/rules').read()
    assert text == 'expose-rw=/\n', text
    return text


attempt(payload)
