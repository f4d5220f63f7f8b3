# rule: expose-rw=.
# rule: python-import=tkinter,os
# expect: absent api

"""Objective: bring a hidden Tcl command back and write a
file outside the exposure through 'interp invokehidden', 'interp expose', or the ensemble's
implementation command ::tcl::file::... (issue 18, class 1).

Under python-sb with the rules above: interp itself is hidden, the file subcommands that write
too (an 'api' denial).
"""
from _harness import attempt


def payload():
    import os
    import tkinter
    tcl = tkinter.Tcl()
    target = os.path.abspath('../outside/made_by_tcl_' + os.urandom(4).hex())
    for script in (
        f'interp invokehidden {{}} exec touch {target}',
        'interp expose {} exec',
        f'::tcl::file::mkdir {target}',
        f'file mkdir {target}',
    ):
        try:
            tcl.eval(script)
        except tkinter.TclError:
            pass
        if os.path.exists(target):
            return
    raise RuntimeError('nothing written')


attempt(payload)
