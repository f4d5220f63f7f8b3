# rule: expose-ro=.
# rule: python-import=os
# expect: file PermissionError
# was-bypass (fixed by the guard in a4dd50e, kept as a regression): os.open.__closure__ -> call_open.__closure__ -> generator.send.__self__: the hidden generator runs the original posix.open with dir_fd, and the open event (no dir_fd) is judged from the cwd

"""Objective: read ../outside/secret.txt through a directory descriptor of the project, by
     sending the call straight to the generator that holds the original posix.open.
"""

from _harness import attempt


def payload():
    import os
    d = os.open('.', os.O_RDONLY)
    os.chdir('a/b')  # from here, ../outside/secret.txt is a path in the project
    if type(os.open).__name__ == 'builtin_function_or_method':
        # plain python3 (the control): nothing wrapped, the objective is a plain dir_fd open
        fd = os.open('../outside/secret.txt', os.O_RDONLY, dir_fd=d)
    else:
        call_open = next(c.cell_contents for c in os.open.__closure__
                         if type(c.cell_contents).__name__ == 'function')
        send = next(c.cell_contents for c in call_open.__closure__
                    if type(c.cell_contents).__name__ == 'builtin_function_or_method')
        request = (('../outside/secret.txt', os.O_RDONLY, 0), {'dir_fd': d})
        got = send.__self__.send(request)
        if callable(got):  # the factory of one-shot generators hands one out
            got = got(request)
        ok, fd = got
        if not ok:
            raise fd
    data = os.read(fd, 100)
    assert data == b'the secret\n', data
    return data


attempt(payload)
