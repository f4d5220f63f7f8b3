# rule: expose-ro=.
# expect: import ModuleNotFoundError

"""Objective: make a socket with ``_socket`` (loaded by python-sb's guard before the program,
kept in the import stash; no rule lets the program import it), taken out of the stash.

The stash's hidden operation ``restore`` accepts a module of the exact type only and reads its
name from its dict -- with ``dict.get``, which compares the keys: a module of the program's
whose dict holds a ``str`` subclass key equal to ``"__name__"`` (with its hash) had its
``__eq__`` called there, next to the stash. It resumed a generator frame kept earlier, whose
``f_back`` chain (no audit event) reached the operation's frame and the stash.

Under python-sb with the rules above: the name is found by iterating the dict and comparing
exact ``str`` keys only: nothing of the program runs, and ``import _socket`` is refused.
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
                stash = frame.f_locals.get("stash")
                if type(stash) is dict:
                    found.append(stash)
                    break
                frame = frame.f_back

    walker = spy()
    next(walker)

    class Key(str):
        __hash__ = str.__hash__

        def __eq__(self, other):
            if not found:
                next(walker)
            return str.__eq__(self, other)

    module = type(sys)("r5_nothing")
    namespace = module.__dict__
    del namespace["__name__"]
    namespace[Key("__name__")] = "r5_nothing"
    loader = getattr(sys.meta_path[0], "_loader", None)
    if loader is not None and hasattr(loader, "exec_module"):  # python-sb's stash finder
        loader.exec_module(module)
    if found and "_socket" in found[0]:
        c_socket = found[0]["_socket"]
    else:  # plain python3, or the stash out of reach
        import _socket as c_socket
    sock = c_socket.socket()
    family = sock.family
    sock.close()
    return int(family)


attempt(payload)
