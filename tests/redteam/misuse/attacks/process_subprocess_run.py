# rule: expose-ro=.
# rule: python-import=subprocess
# expect: api RuleApiPermissionError

"""Objective: run a program with subprocess.run.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import subprocess
    subprocess.run(['true'], check=True)


attempt(payload)
