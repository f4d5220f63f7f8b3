# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt as a readline history file, with the unwrapped C
``read_history_file`` handed to the program by the guard's own ``_named``. No rule but the
file exposure.

When a module of ``native_files.WRAPPED`` is created after arming (``_imp.create_dynamic`` of
``encodings.readline``: the top-level name ``encodings`` is always allowed, the last part
``readline`` is what gets wrapped), ``wrap_module`` builds each wrapper and names it with
``wrappers._named(wrapper, original)``, a module-level function that calls ``getattr`` and
``setattr`` -- looked up at run time in ``pysandboxes.guard.wrappers``' namespace first. The
program imports that module (``pysandboxes`` is always allowed) and puts its own ``getattr``
there: ``_named`` calls it with the original C function as its first argument.
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
    if wrappers is not None:
        real = getattr

        def spy(obj, name, *default):
            if real(obj, '__name__', None) == 'read_history_file':
                originals.setdefault('read_history_file', obj)
            return real(obj, name, *default)

        wrappers.getattr = spy
    origin = None
    for entry in sys.path:
        if entry.endswith('lib-dynload'):
            origin = entry + '/readline' + _imp.extension_suffixes()[0]
    spec = type(posix.__spec__)('encodings.readline', None, origin=origin)
    fresh = _imp.create_dynamic(spec)
    if wrappers is not None:
        del wrappers.getattr
    read = originals.get('read_history_file', fresh.read_history_file)
    fresh.clear_history()
    read('../outside/secret.txt')
    line = fresh.get_history_item(1)
    assert line == 'the secret', line
    return line, len(originals)


attempt(payload)
