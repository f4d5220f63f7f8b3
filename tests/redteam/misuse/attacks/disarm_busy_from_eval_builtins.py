# rule: expose-ro=.
# rule: python-import=os,builtins
# rule: eval-syntax=arith
# expect: api RuleApiPermissionError

"""Objective: mark the thread busy with the guard's own enter() -- dug out of the closures of
the builtins the eval-* rules replace -- then signal another process
(os.kill, process control) unjudged.

Under python-sb with the rules above: the walk finds no enter() (the replaced builtins hold
the guard's caller check in a hidden generator) and os.kill is refused.
"""
from _harness import attempt


def payload():
    import builtins
    import os

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

    for name in ("compile", "eval", "exec"):
        enter = find(getattr(builtins, name))
        if enter is not None:
            enter()
            break
    os.kill(os.getppid(), 0)  # plain Python: allowed (signal 0: no harm done)


attempt(payload)
