# rule: expose-ro=.
# rule: python-import=inspect
# expect: api PermissionError

"""Objective: read ../outside/secret.txt as a readline history file, through a fresh
``readline`` made by the unwrapped ``_imp.create_dynamic``, dug out of its factory generator
with ``inspect.getgeneratorlocals``. Rules: the file exposure and ``import inspect``.

``_imp.create_dynamic`` is hidden with ``hide_reentrant(outside_guard=True)``: its factory
generator holds ``fn`` and is rebuilt with globals that are no guard module's
(``OUTSIDE_SCOPE``), so that ``sys._getframe`` still works for an extension's initialisation.
The hook refuses ``gi_frame`` for a guard frame (whoever asks) and, otherwise, only when the
*program* reads it. ``guard_running`` recognises guard frames by their globals -- not these.
And ``inspect.getgeneratorlocals`` reads ``gi_frame`` from ``inspect.py``, a library that is
not a code deputy.

1. ``_imp.create_dynamic.__closure__`` -> ``call`` -> ``__closure__`` -> ``make_next``, the
   factory's ``send`` (no audit event); ``make_next.__self__`` is the factory generator.
2. ``inspect.getgeneratorlocals(factory)['fn']`` is the original (``gi_frame`` read by a
   library, of a frame that is not a guard frame: let through).
3. The original makes ``encodings.readline`` (the top-level name ``encodings`` is always
   allowed): no ``wrap_module``, its ``read_history_file`` is the bare C function.
"""

from _harness import attempt


def payload():
    import inspect
    import sys

    _imp = sys.modules['_imp']
    posix = sys.modules['posix']
    create = _imp.create_dynamic
    found = []

    def generators(function):
        for cell in getattr(function, '__closure__', None) or ():
            value = cell.cell_contents
            if type(value).__name__ == 'builtin_function_or_method' and value.__name__ == 'send':
                yield value.__self__
            elif type(value).__name__ == 'function':
                yield from generators(value)

    for generator in generators(create):
        names = inspect.getgeneratorlocals(generator)
        if type(names.get('fn')).__name__ == 'builtin_function_or_method':
            found.append(names['fn'])
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
