# rule: expose-ro=.
# rule: python-import=os

"""Legitimate: os.path.expanduser('~') without HOME asks pwd for the process's own entry
(python-sb filters the environment, so HOME can be absent); no rule on /etc/passwd needed."""

import os

os.environ.pop("HOME", None)
home = os.path.expanduser("~")
assert home.startswith("/") and home != "~", home
assert os.path.expanduser("~/x") == home.rstrip("/") + "/x"
print("LEGIT DONE")
