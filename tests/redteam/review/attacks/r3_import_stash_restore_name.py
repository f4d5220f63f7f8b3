# rule: expose-ro=.
# expect: import ModuleNotFoundError

"""Objective: make a socket with ``_socket`` (loaded by python-sb's guard before the program,
then stashed) with no ``python-import`` rule for it, by taking it out of the guard's private stash. No rule
but the file exposure.

The stash finder (``sys.meta_path[0]``) keeps the modules loaded before the program in
``stash``, a free variable of ``operate``, which runs hidden behind ``wrappers.hide`` ("the
stash is not in the program's reach"; every operation that hands out a module is judged).
Its loader's ``exec_module(module)`` is ``operate("restore", module)``, which first reads
``getattr(module, "__name__", None)`` -- of whatever object the program passes, with no
judgment before: a ``__name__`` property of the program's runs with ``operate``'s frame as its
caller. (``getattr`` itself is also looked up at run time in the module's namespace.)

A generator frame kept from earlier (``sys._getframe()`` with no guard frame among its
callers: allowed) is resumed there and walks ``f_back`` (no audit event) to ``operate``'s
frame: ``f_locals['stash']`` (no event) holds ``_socket``.
"""

from _harness import attempt


def payload():
    import sys

    found = []

    def spy():
        me = sys._getframe()
        while True:
            yield
            frame = me.f_back
            while frame is not None:
                names = frame.f_locals
                if 'stash' in names and 'specs' in names:
                    found.append(names['stash'])
                    break
                frame = frame.f_back

    walker = spy()
    next(walker)

    class Module:
        @property
        def __name__(self):
            if not found:
                next(walker)
            return 'r3_nothing'

    loader = getattr(sys.meta_path[0], '_loader', None)
    if loader is not None and hasattr(loader, 'exec_module'):  # python-sb's stash finder
        loader.exec_module(Module())
    if found:
        c_socket = found[0]['_socket']
    else:  # plain python3
        import _socket as c_socket
    sock = c_socket.socket()
    family = sock.family
    sock.close()
    assert family == c_socket.AF_INET, family
    return family


attempt(payload)
