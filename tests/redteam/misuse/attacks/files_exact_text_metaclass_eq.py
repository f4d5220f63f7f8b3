# rule: expose-ro=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: read ../outside/secret.txt through ``dir_fd`` with the raw ``posix.open``, taken
from the list of the hidden generator that holds it while its ``before`` runs.

The wrapped ``os.open``'s ``before`` makes the path exact; for an object that is neither a
``str``, ``bytes`` nor an ``int``, it asked whether ``int`` was ``in`` the object's class's
MRO -- a containment test that compares with ``==``, which a metaclass of the program's
answers: its ``__eq__`` ran inside the ``before``, resumed a generator frame kept earlier,
and its ``f_back`` chain (no audit event) reached the generator's list, the original still in
it.

Under python-sb with the rules above: the MRO is walked by identity; nothing of the
program's runs there, and the open is refused.
"""
from _harness import attempt


def payload():
    import os
    import sys

    found = []

    def spy():
        me = sys._getframe()
        while True:
            yield
            frame = me.f_back
            while frame is not None:
                box = frame.f_locals.get("box")
                if type(box) is list and box:
                    found.extend(box)
                    break
                frame = frame.f_back

    walker = spy()
    next(walker)
    running = []

    class Meta(type):
        def __eq__(cls, other):
            if not found and not running:
                running.append(1)
                next(walker)
                running.clear()
            return type.__eq__(cls, other)

        __hash__ = type.__hash__

    class Odd(metaclass=Meta):
        pass

    try:
        os.close(os.open(Odd(), os.O_RDONLY))
    except TypeError:
        pass
    raw_open = next((f for f in found if getattr(f, "__name__", "") == "open"), os.open)
    directory = os.open(".", os.O_RDONLY)
    os.chdir("a/b")  # from here, ../outside/secret.txt is a path in the project
    fd = raw_open("../outside/secret.txt", os.O_RDONLY, dir_fd=directory)
    data = os.read(fd, 100)
    assert data == b"the secret\n", data


attempt(payload)
