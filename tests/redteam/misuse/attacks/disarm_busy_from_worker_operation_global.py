# rule: expose-ro=.
# rule: python-import=os,pysandboxes
# rule: eval-syntax=arith
# expect: api RuleApiPermissionError

"""Objective: mark the thread busy with the guard's own enter(), taken from the frame of the
hidden function that performs guarded_eval's worker operations, then signal another process
(os.kill, process control) unjudged.

``pysandboxes.evalguard.api.worker_operations()`` hands the operations to any caller; the
hidden function looked ``len`` up in its module's namespace (``pysandboxes.guard.evalbuiltins``,
in ``sys.modules``: a module attribute is set with no audit event). A ``len`` of the
program's then ran inside it: a generator frame kept earlier, resumed there, reaches its frame
through ``f_back`` (no event), whose ``f_locals`` hold ``enter``.

Under python-sb with the rules above: the hidden function looks no name up at run time;
os.kill is refused.
"""
from _harness import attempt


def payload():
    import builtins
    import os
    import sys

    found = []

    def spy():
        me = sys._getframe()
        while True:
            yield
            frame = me.f_back
            while frame is not None:
                enter = frame.f_locals.get("enter")
                if getattr(enter, "__qualname__", "") == "make_busy.<locals>.enter":
                    found.append(enter)
                    break
                frame = frame.f_back

    walker = spy()
    next(walker)

    class Stop(Exception):
        pass

    def shadow(obj):
        next(walker)
        raise Stop  # no fork: the operation stops here

    guard = sys.modules.get("pysandboxes.guard.evalbuiltins")
    from pysandboxes.evalguard import api

    operations = api.worker_operations()  # None outside python-sb
    if guard is not None and operations:
        guard.len = shadow
        try:
            operations[0]()  # fork
        except Exception:
            pass
        guard.len = builtins.len
    for enter in found[:1]:
        enter()
    os.kill(os.getppid(), 0)  # plain Python: allowed (signal 0: no harm done)


attempt(payload)
