# rule: expose-ro=.
# rule: python-import=contextlib,marshal
# expect: api PermissionError

"""Objective: unmarshal data with no deserialization right (marshal is built in: no import rule).
"""

from _harness import attempt


def payload():
    import contextlib, marshal
    data = marshal.dumps({'k': (1, 2)})
    with contextlib.ExitStack() as stack:
        stack.callback(marshal.loads, data)
        stack.callback(marshal.loads, data)
    return 'unmarshalled'


attempt(payload)
