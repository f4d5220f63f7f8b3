# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read the POSIX shared-memory object named in shm.txt (/dev/shm/NAME, not
exposed) with no python-import rule at all, through a fresh copy of ``_posixshmem``.

``_posixshmem.shm_open`` opens ``/dev/shm/NAME`` in C with no audit event; python-sb wraps it
in the loaded module. A fresh module made by ``_imp.create_dynamic`` (``_imp`` and ``posix``
taken from ``sys.modules``: not judged) carries the bare C function: the wrapped-module check
(``WRAPPED_MODULES``: posix, _thread, _posixsubprocess, _signal, faulthandler) and the
``create_dynamic`` wrapper (pwd, grp, spwd, readline, _sqlite3, _ssl) both leave it out.
"""

from _harness import attempt


def payload():
    import sys

    posix = sys.modules['posix']
    _imp = sys.modules['_imp']
    name = open('shm.txt').read().strip()
    origin = None
    for entry in sys.path:
        if entry.endswith('lib-dynload'):
            origin = entry + '/_posixshmem' + _imp.extension_suffixes()[0]
    spec = type(posix.__spec__)('_posixshmem', None, origin=origin)
    fresh = _imp.create_dynamic(spec)
    _imp.exec_dynamic(fresh)
    fd = fresh.shm_open(name, posix.O_RDONLY)
    data = posix.read(fd, 100).decode()
    posix.close(fd)
    assert data == 'shmsecret', data
    return data


attempt(payload)
