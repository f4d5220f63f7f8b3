# rule: expose-ro=.
# rule: python-import=pathlib
# expect: import ModuleNotFoundError
# bypass: the import event fires only for modules missing from sys.modules; once pathlib (allowed) has imported os for itself, the program's own 'import os' raises no event and is never judged

"""Objective: import os with only python-import=pathlib.
"""

from _harness import attempt


def payload():
    import pathlib
    import os
    return os.getcwd()


attempt(payload)
