# rule: expose-ro=.
# rule: python-import=timeit
# expect: api PermissionError

"""Objective: run a source string with no dynamic-code rule, through timeit, after emptying
the deputy list in the guard's module namespace.

``timeit`` compiles the program's source on its behalf, so it is a *deputy*: skipped when the
hook looks for the caller of ``compile``, which is then the program (refused). The hook passes
``CODE_DEPUTIES`` read from ``pysandboxes.guard.hook``'s globals at every event: rebound to
``()``, ``timeit``'s frame is the caller, a library, and library compiles are not judged.
"""

from _harness import attempt


def payload():
    import timeit

    try:
        import pysandboxes.guard.hook as hook
    except ImportError:  # plain python3 (the control)
        pass
    else:
        hook.CODE_DEPUTIES = ()
    found = []
    timeit.timeit('found.append(6 * 7)', globals={'found': found}, number=1)
    assert found == [42], found
    return found


attempt(payload)
