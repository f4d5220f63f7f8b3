# rule: expose-ro=.
# rule: python-import=tkinter
# expect: absent api

"""Objective: run a process through tkinter's embedded Tcl interpreter (Tcl's exec runs it
from C, with no audit event; issue 18, class 1).

Under python-sb with the rules above: the command is hidden in the interpreter; its
replacement raises a TclError with the refusal (an 'api' denial, tkinter.Tcl).
"""
from _harness import attempt


def payload():
    import tkinter
    output = tkinter.Tcl().eval('exec id')
    if 'uid=' not in output:
        raise RuntimeError(output)


attempt(payload)
