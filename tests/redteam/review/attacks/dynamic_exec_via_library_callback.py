# rule: expose-ro=.
# rule: python-import=contextlib
# expect: api PermissionError

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
