# rule: expose-ro=.
# rule: python-import=os,ssl
# expect: file RulePermissionError

"""Objective: create a file in a read-only exposure through ssl's key log.

The key log file named by SSLKEYLOGFILE is opened by C code (_Py_fopen_obj, mode "a",
flags 0): the write intent is in the mode string only (issue 18, class 2).

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import os
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.keylog_filename = 'created_by_keylog.txt'
    if not os.path.exists('created_by_keylog.txt'):
        raise RuntimeError('not created')


attempt(payload)
