# rule: expose-ro=.
# rule: python-import=os,_posixsubprocess
# expect: api PermissionError
# was-bypass (fixed by the guard in a4dd50e, kept as a regression): _posixsubprocess.fork_exec's wrapper keeps the original in a generator, but generator.send is in the wrapper's closure (__closure__, no audit event): send.__self__.send(...) runs fork_exec with no pysandboxes.call event

"""Objective: start a child process without process-exec.
"""

from _harness import attempt


def payload():
    import os
    r, w = os.pipe()
    er, ew = os.pipe()
    args = ([b'/bin/echo', b'child-ran'], [b'/bin/echo'], True, (w, ew), None, None,
            -1, -1, -1, w, -1, -1, er, ew, True, False, -1, None, None, None, -1, None, False)

    import _posixsubprocess
    if type(_posixsubprocess.fork_exec).__name__ == 'builtin_function_or_method':
        pid = _posixsubprocess.fork_exec(*args)  # plain python3 (the control)
    else:
        call = next(c.cell_contents for c in _posixsubprocess.fork_exec.__closure__
                    if type(c.cell_contents).__name__ == 'function')
        send = next(c.cell_contents for c in call.__closure__
                    if type(c.cell_contents).__name__ == 'builtin_function_or_method')
        request = (args, {})
        got = send.__self__.send(request)
        if callable(got):  # the factory of one-shot generators hands one out
            got = got(request)
        ok, pid = got
        if not ok:
            raise pid

    os.close(w)
    os.close(ew)
    out = os.read(r, 100)
    os.waitpid(pid, 0)
    assert out == b'child-ran\n', out
    return out


attempt(payload)
