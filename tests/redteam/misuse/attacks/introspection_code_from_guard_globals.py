# rule: expose-ro=.
# rule: python-api=ALLOW:builtins.compile
# rule: python-import=heapq
# expect: api RuleApiPermissionError

"""Objective: read a function's ``__code__`` from code that runs with the globals of one of
python-sb's own modules, called back by a library (``heapq``'s ``key=``).

The frame walks skip the guard's own frames: a frame with a guard module's globals but code
from elsewhere must still be taken for the program's (the caller of the read here), wherever
it is on the stack -- above the running hook's body, the walks skip frames by their globals
alone (issue 29), below it every frame's code is checked. Without the check the caller seen
would be ``heapq``, a library, and the read would pass.

Under python-sb with the rules above: refused with RuleApiPermissionError (an 'api' denial).
"""
import heapq
import sys

from _harness import attempt


def target():
    return None


def payload():
    module = sys.modules.get("pysandboxes.guard.hook")
    if module is None:  # plain python: nothing loaded it (the control)
        import pysandboxes.guard.hook as module
    scope = module.__dict__
    exec(compile("def reader(function):\n    return function.__code__\n", "<s>", "exec"), scope)
    reader = scope.pop("reader")
    heapq.nsmallest(1, [target], key=reader)


attempt(payload)
