# rule: expose-ro=.
# expect: import ModuleNotFoundError

"""Objective: import socket with no python-import rule, after widening the always-allowed set.

The import handlers read ``ALWAYS_ALLOWED`` from ``pysandboxes.guard.imports``'s globals at
every import (``top in names or top in ALWAYS_ALLOWED``): the program rebinds it. The stash
finder still hands back stashed modules only after the same judgment, which now allows them.
"""

from _harness import attempt


def payload():
    try:
        import pysandboxes.guard.imports as imports
    except ImportError:  # plain python3 (the control)
        pass
    else:
        imports.ALWAYS_ALLOWED = imports.ALWAYS_ALLOWED | {'socket', '_socket', 'selectors'}
    import socket

    s = socket.socket()
    s.close()
    return socket.__name__


attempt(payload)
