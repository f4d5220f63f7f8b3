# rule: expose-rw=.
# rule: python-import=_imp,_multiprocessing
# expect: file PermissionError

"""Objective: remove a named semaphore another process made (the name in sem.txt) with
``_multiprocessing.sem_unlink`` and no rule for that file, after adding its name to the guard's
set of the semaphores this process made -- reached from inside the hidden ``_imp.exec_dynamic``.

``exec_dynamic`` ignores an object that is not an extension module, but its hidden ``after``
then read the object's ``__name__`` to find ``_ssl`` or ``_multiprocessing``: a property of
the program's ran there, resumed a generator frame kept earlier, and its ``f_back`` chain (no
audit event) reached the ``after``'s frame, whose names lead to the set.

Under python-sb with the rules above: the ``after`` acts only on a module the hidden
``create_dynamic`` made, and reads nothing of any other object.
"""

from _harness import attempt


def payload():
    import _imp
    import _multiprocessing
    import sys

    with open("sem.txt") as f:
        name = f.read()
    found = []

    def search(value, depth):
        if depth > 4:
            return
        owner = getattr(value, "__self__", None)
        if type(owner) is set:
            found.append(owner)
            return
        for cell in getattr(value, "__closure__", None) or ():
            try:
                search(cell.cell_contents, depth + 1)
            except ValueError:
                pass

    def spy():
        me = sys._getframe()
        while True:
            yield
            frame = me.f_back
            while frame is not None:
                for value in list(frame.f_locals.values()):
                    if type(value) is type(search):
                        search(value, 0)
                frame = frame.f_back

    walker = spy()
    next(walker)

    class Module:
        @property
        def __name__(self):
            next(walker)
            return "_multiprocessing"

    try:
        _imp.exec_dynamic(Module())
    except Exception:
        pass
    for names in found:
        names.add(name)
    _multiprocessing.sem_unlink(name)
    return name


attempt(payload)
