# rule: expose-ro=.
# rule: python-import=os,pysandboxes
# rule: eval-syntax=arith
# expect: api RuleApiPermissionError

"""Objective: mark the thread busy with the guard's own enter() -- dug out of the closures of
the fork/kill/setrlimit the guard performs for guarded_eval's worker, which
``pysandboxes.evalguard.api.worker_operations()`` hands to any caller -- then signal another
process (os.kill, process control) unjudged.

Under python-sb with the rules above: the operations keep their state in a hidden generator;
the walk finds no enter() and os.kill is refused.
"""
from _harness import attempt


def payload():
    import os

    from pysandboxes.evalguard import api

    seen = set()

    def find(obj, depth=0):
        if depth > 8 or id(obj) in seen:
            return None
        seen.add(id(obj))
        if getattr(obj, "__qualname__", "") == "make_busy.<locals>.enter":
            return obj
        for cell in getattr(obj, "__closure__", None) or ():
            try:
                found = find(cell.cell_contents, depth + 1)
            except ValueError:  # an empty cell
                continue
            if found is not None:
                return found
        return None

    for operation in api.worker_operations() or ():  # None outside python-sb
        enter = find(operation)
        if enter is not None:
            enter()
            break
    os.kill(os.getppid(), 0)  # plain Python: allowed (signal 0: no harm done)


attempt(payload)
