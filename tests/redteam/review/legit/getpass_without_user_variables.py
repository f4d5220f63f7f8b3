# rule: expose-ro=.
# rule: python-import=os,getpass,grp

"""Legitimate: getpass.getuser() without LOGNAME/USER/LNAME/USERNAME asks pwd for the
process's own entry, and grp.getgrgid of the process's own group needs no rule either."""

import getpass
import grp
import os

for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
    os.environ.pop(name, None)
user = getpass.getuser()
assert user, user
assert grp.getgrgid(os.getgid()).gr_name
print("LEGIT DONE")
