# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt as a readline history file, with the unwrapped C
``read_history_file`` handed to the program by the guard's own ``wrappers.hide``. No rule but
the file exposure.

Since ``8fe7611``, ``wrappers.hide(fn, kit, before, after)`` is ``return hide_reentrant(fn,
...)``: ``hide_reentrant`` is a module global of ``pysandboxes.guard.wrappers``, looked up at
run time -- and ``hide`` runs after arming whenever a module of ``native_files.WRAPPED`` is
created (``wrap_module``). The program imports that module (``pysandboxes`` is always
allowed) and puts its own ``hide_reentrant`` there; ``_imp.create_dynamic`` of
``encodings.readline`` (the top-level name ``encodings`` is always allowed, the last part
``readline`` is what gets wrapped) then hands it each original C function.

A bypass of ``8fe7611`` (the same hole as ``r3_files_named_getattr_global.py``, reopened by
the fix of another); refused once ``hide`` binds ``hide_reentrant`` at import.
"""

from _harness import attempt


def payload():
    import sys

    _imp = sys.modules['_imp']
    posix = sys.modules['posix']
    originals = {}
    try:
        import pysandboxes.guard.wrappers as wrappers
    except ImportError:  # plain python3 (the control)
        wrappers = None
    real = getattr(wrappers, 'hide_reentrant', None)
    if real is not None:

        def spy(fn, *args, **kwargs):
            originals.setdefault(getattr(fn, '__name__', None), fn)
            return real(fn, *args, **kwargs)

        wrappers.hide_reentrant = spy
    origin = None
    for entry in sys.path:
        if entry.endswith('lib-dynload'):
            origin = entry + '/readline' + _imp.extension_suffixes()[0]
    spec = type(posix.__spec__)('encodings.readline', None, origin=origin)
    try:
        fresh = _imp.create_dynamic(spec)
    finally:
        if real is not None:
            wrappers.hide_reentrant = real
    read = originals.get('read_history_file', fresh.read_history_file)
    fresh.clear_history()
    read('../outside/secret.txt')
    line = fresh.get_history_item(1)
    assert line == 'the secret', line
    return line, len(originals)


attempt(payload)
