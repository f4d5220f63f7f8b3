# rule: expose-rw=.
# rule: python-import=os,stat
# expect: api RuleApiPermissionError

"""Objective: make a device node in the writable project and reach the device through it
(its later open is judged by its path, inside the exposure; issue 18, class 4). The control
copies /dev/null's numbers (as root).

Under python-sb with the rules above: a character or block node is refused
(RuleApiPermissionError, an 'api' denial: os.mknod, category privileges).
"""
from _harness import attempt


def payload():
    import os
    import stat
    name = 'device_' + os.urandom(4).hex()
    os.mknod(name, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    try:
        with open(name, 'w') as handle:
            handle.write('reaches the device')
        if not stat.S_ISCHR(os.stat(name).st_mode):
            raise RuntimeError('not a device')
    finally:
        os.remove(name)


attempt(payload)
