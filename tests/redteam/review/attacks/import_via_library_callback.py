# rule: expose-ro=.
# rule: python-import=contextlib
# expect: import ModuleNotFoundError

"""Objective: get the json module with no rule for json, through contextlib.ExitStack.callback.
"""

from _harness import attempt


def payload():
    import contextlib
    box = []
    with contextlib.ExitStack() as stack:
        stack.callback(lambda: box.append(__import__('json')))
        stack.callback(__import__, 'json')
    return box[0].dumps([1])


attempt(payload)
