# rule: expose-ro=.
# expect: import ModuleNotFoundError

"""Objective: run /bin/cat ../outside/secret.txt as a child process (no process-exec rule, no
python-import rule at all) through a fresh, unwrapped ``_posixsubprocess``.

A fresh copy of a wrapped module is refused by the ``import`` handler when its name is in
``WRAPPED_MODULES``, which the handler reads from ``pysandboxes.guard.imports``' globals at
every event: rebound to an empty set, ``_imp.create_dynamic`` (``_imp`` and ``posix`` taken
from ``sys.modules``: not judged) hands over a ``_posixsubprocess`` whose ``fork_exec`` is the
bare C function. The child is under no Python layer.
"""

from _harness import attempt


def payload():
    import sys

    posix = sys.modules['posix']
    _imp = sys.modules['_imp']
    try:
        import pysandboxes.guard.imports as imports
    except ImportError:  # plain python3 (the control)
        pass
    else:
        imports.WRAPPED_MODULES = frozenset()
    origin = None
    for entry in sys.path:
        if entry.endswith('lib-dynload'):
            origin = entry + '/_posixsubprocess' + _imp.extension_suffixes()[0]
    spec = type(posix.__spec__)('_posixsubprocess', None, origin=origin)
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
