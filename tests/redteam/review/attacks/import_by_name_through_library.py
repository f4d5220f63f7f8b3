# rule: expose-ro=.
# rule: python-import=pkgutil,os
# expect: import ModuleNotFoundError
# bypass: pkgutil.resolve_name is not an import deputy: its importlib.import_module call is judged as pkgutil's own import, so any module is handed to the program

"""Objective: get the json module with no rule for json, through pkgutil.resolve_name.
"""

from _harness import attempt


def payload():
    import pkgutil
    json = pkgutil.resolve_name('json')
    return json.dumps([1])


attempt(payload)
