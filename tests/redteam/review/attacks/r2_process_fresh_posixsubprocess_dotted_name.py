# rule: expose-ro=.
# expect: import ModuleNotFoundError

"""Objective: run /bin/cat ../outside/secret.txt as a child process (no process-exec rule, no
python-import rule at all) through a fresh, unwrapped ``_posixsubprocess`` loaded under a
dotted name.

The ``import`` handler refuses a fresh copy of a wrapped module when the *top-level* part of
its name is in ``WRAPPED_MODULES``; CPython finds an extension's init function by the *last*
part (``PyInit__posixsubprocess`` for ``pkg._posixsubprocess``), as ``native_files`` knows.
``_imp`` and ``posix`` come from ``sys.modules`` (not judged); ``fork_exec`` of the fresh
module is the bare C function, and the child is under no Python layer.
"""

from _harness import attempt


def payload():
    import sys

    posix = sys.modules['posix']
    _imp = sys.modules['_imp']
    origin = None
    for entry in sys.path:
        if entry.endswith('lib-dynload'):
            origin = entry + '/_posixsubprocess' + _imp.extension_suffixes()[0]
    spec = type(posix.__spec__)('pkg._posixsubprocess', None, origin=origin)
    fresh = _imp.create_dynamic(spec)
    _imp.exec_dynamic(fresh)
    read_end, write_end = posix.pipe()
    err_read, err_write = posix.pipe()
    pid = fresh.fork_exec(
        [b'/bin/cat', b'../outside/secret.txt'], [b'/bin/cat'], True, (write_end, err_write),
        None, None, -1, -1, -1, write_end, -1, -1, err_read, err_write,
        True, False, -1, None, None, None, -1, None, False,
    )
    posix.close(write_end)
    posix.close(err_write)
    posix.waitpid(pid, 0)
    data = posix.read(read_end, 100).decode()
    assert data == 'the secret\n', data
    return data


attempt(payload)
