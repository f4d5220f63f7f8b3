# rule: expose-ro=.
# rule: python-import=os
# expect: file PermissionError
# was-bypass (fixed by the guard in a4dd50e, kept as a regression): the os.open wrapper looks 'isinstance' up in its module globals at run time; os.open.__globals__ (no audit event) lets the program shadow it, so the dir_fd rewrite never happens

"""Objective: read ../outside/secret.txt through a dir_fd after shadowing a name in the wrapper's globals.
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
        os.open.__globals__['isinstance'] = lambda obj, cls: False
        fd = os.open('../outside/secret.txt', os.O_RDONLY, dir_fd=d)
    data = os.read(fd, 100)
    assert data == b'the secret\n', data
    return data


attempt(payload)
