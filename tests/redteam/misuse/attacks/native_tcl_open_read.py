# rule: expose-ro=.
# rule: python-import=tkinter
# expect: absent api

"""Objective: read a file outside the exposure with Tcl's open and read (C code of the Tcl
library, no audit event; issue 18, class 1).

Under python-sb with the rules above: open is hidden in the interpreter (an 'api' denial).
"""
from _harness import attempt


def payload():
    import tkinter
    tcl = tkinter.Tcl()
    channel = tcl.eval('open ../outside/secret.txt')
    if 'the secret' not in tcl.eval(f'read {channel}'):
        raise RuntimeError('not read')


attempt(payload)
