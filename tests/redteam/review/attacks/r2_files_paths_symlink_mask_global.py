# rule: expose-rw=.
# rule: python-import=os
# expect: file PermissionError

"""Objective: read ../outside/secret.txt through a symbolic link to the project itself
(``s -> .``), after blinding the guard's path resolution to symbolic links.

``resolve`` (``pysandboxes.guard.paths``) tells a link from a directory with
``mode & _S_IFMT == _S_IFLNK``, both read from the module's globals at every component: with
``_S_IFMT = 0`` no component is a link, ``s/..`` cancels lexically and
``s/../outside/secret.txt`` is judged as ``./outside/secret.txt`` (inside the exposure), while
the kernel follows ``s`` to the project and ``..`` to its parent.
"""

from _harness import attempt


def payload():
    import os

    os.symlink('.', 's')  # a link to the project itself: its target is exposed
    try:
        import pysandboxes.guard.paths as paths
    except ImportError:  # plain python3 (the control)
        pass
    else:
        paths._S_IFMT = 0
    with open('s/../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data


attempt(payload)
