# rule: expose-rw=.
# rule: python-import=_multiprocessing
# expect: file PermissionError

"""Objective: remove a named semaphore another process made (``/dev/shm/sem.NAME``, the name
in sem.txt) with ``_multiprocessing.sem_unlink`` and no rule for that file.

The hidden ``sem_unlink`` lets a name through when this process made the semaphore, and the
guard records those names in a set. The guarded ``SemLock.__new__`` that records them is a
class member the program reaches; its closure held the set itself, which the program could
add any name to (no audit event).

Under python-sb with the rules above: the creation and the record are made in a hidden call,
and the exposed methods hold no way to the set: the removal is judged, and refused.
"""

from _harness import attempt


def payload():
    import _multiprocessing

    with open("sem.txt") as f:
        name = f.read()
    semlock = _multiprocessing.SemLock
    for function in (vars(semlock).get("__new__"), vars(semlock).get("_rebuild")):
        function = getattr(function, "__func__", function)
        for cell in getattr(function, "__closure__", None) or ():
            if type(cell.cell_contents) is set:
                cell.cell_contents.add(name)
    _multiprocessing.sem_unlink(name)
    return name


attempt(payload)
