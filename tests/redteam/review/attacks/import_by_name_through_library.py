# rule: expose-ro=.
# rule: python-import=pkgutil,os
# expect: import ModuleNotFoundError

"""Objective: get the json module with no rule for json, through pkgutil.resolve_name.
"""

from _harness import attempt


def payload():
    import pkgutil
    json = pkgutil.resolve_name('json')
    return json.dumps([1])


attempt(payload)
