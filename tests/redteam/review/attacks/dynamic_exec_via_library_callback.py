# rule: expose-ro=.
# rule: python-import=contextlib
# expect: api PermissionError
# bypass: dynamic code is refused only when the first frame outside the guard and the deputies is the program's; a pure-Python library that calls a program-supplied callable (contextlib.ExitStack.callback, weakref.finalize, sched, asyncio call_soon...) makes exec/eval of a string the library's own

"""Objective: exec a source string with no dynamic-code right, through contextlib.ExitStack.callback.
"""

from _harness import attempt


def payload():
    import contextlib
    namespace = {}
    with contextlib.ExitStack() as stack:
        stack.callback(exec, 'RESULT = 6 * 7', namespace)
    assert namespace['RESULT'] == 42
    return namespace['RESULT']


attempt(payload)
