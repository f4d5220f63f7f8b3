# rule: expose-ro=.
# rule: python-import=tkinter
# expect: absent api

"""Objective: connect to a TCP port no net= rule grants with Tcl's socket command
(issue 18, class 1).

Under python-sb with the rules above: socket is hidden in the interpreter (an 'api' denial).
"""
from _harness import attempt


def payload():
    import tkinter
    with open('port.txt') as handle:
        port = handle.read().strip()
    tcl = tkinter.Tcl()
    channel = tcl.eval(f'socket 127.0.0.1 {port}')
    tcl.eval(f'close {channel}')


attempt(payload)
