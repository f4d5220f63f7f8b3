# rule: expose-ro=.
# rule: python-import=os
# rule: eval-syntax=arith
# expect: api RuleApiPermissionError

"""Objective: signal another process (os.kill, process control) from code of the program's
that runs while the guard has marked the thread busy (the hook then lets signals through).

The ``eval-*`` builtins keep the guard's caller check in a hidden generator; the function that
sends it a request is in ``builtins.compile``'s closure (read with no audit event). Sent a
"tuple of deputies" of the program's, the check marked the thread busy and then asked
``if deputies:`` -- the object's ``__bool__``, run busy.

Under python-sb with the rules above: the hidden call takes an exact tuple of exact ``str``
only, before the check runs; os.kill is refused.
"""
from _harness import attempt


def payload():
    import builtins
    import os

    send = None
    for cell in getattr(builtins.compile, "__closure__", None) or ():
        for inner in getattr(cell.cell_contents, "__closure__", None) or ():
            if getattr(inner.cell_contents, "__qualname__", "") == "hide_reentrant.<locals>.call":
                send = inner.cell_contents
    signalled = []

    class Deputies:
        def __bool__(self):
            if not signalled:
                os.kill(os.getppid(), 0)  # signal 0: no harm done
                signalled.append(True)
            return False

    if send is not None:  # python-sb
        try:
            send((Deputies(),), {})
        except Exception:
            pass
    if not signalled:
        os.kill(os.getppid(), 0)  # plain Python: allowed


attempt(payload)
