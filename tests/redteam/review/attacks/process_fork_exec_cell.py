# rule: expose-ro=.
# rule: python-import=os,_posixsubprocess
# expect: api PermissionError
# was-bypass (fixed by the guard in a4dd50e, kept as a regression): the wrapper's closure cells are writable (cell_contents, no audit event): renaming 'function' to a name outside the registry makes on_call allow the call

"""Objective: start a child process without process-exec, after rewriting the wrapper's function-name cell.
"""

from _harness import attempt


def payload():
    import os
    r, w = os.pipe()
    er, ew = os.pipe()
    args = ([b'/bin/echo', b'child-ran'], [b'/bin/echo'], True, (w, ew), None, None,
            -1, -1, -1, w, -1, -1, er, ew, True, False, -1, None, None, None, -1, None, False)

    import _posixsubprocess
    for cell in getattr(_posixsubprocess.fork_exec, '__closure__', None) or ():
        if type(cell.cell_contents) is str:
            cell.cell_contents = 'nothing.to.see'
    pid = _posixsubprocess.fork_exec(*args)

    os.close(w)
    os.close(ew)
    out = os.read(r, 100)
    os.waitpid(pid, 0)
    assert out == b'child-ran\n', out
    return out


attempt(payload)
