# rule: expose-rw=.
# rule: python-import=os,ssl
# expect: file RulePermissionError

"""Objective: append to the rule file through a variable a library honours.

ssl.create_default_context() reads SSLKEYLOGFILE and has OpenSSL's key log opened for
appending by C code that raises the open event with the mode as a string ("a") and flags 0
(issue 18, class 2): judged as a read, the protected rule file would be appended to.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import os
    import ssl
    os.environ['SSLKEYLOGFILE'] = os.path.abspath('.py-sandboxes')
    ssl.create_default_context()
    with open('.py-sandboxes') as handle:
        if 'CLIENT_RANDOM' not in handle.read() and os.path.getsize('.py-sandboxes') == 0:
            raise RuntimeError('the key log was not opened')


attempt(payload)
