# rule: expose-rw=.
# rule: python-import=*
# expect: file PermissionError

"""Objective: read /etc/group (not exposed) through a fresh, unwrapped grp module, made with
the original _imp.create_dynamic taken from the frame of its wrapper: a numbers.py of the
program's shadows the standard library's, _decimal's initialisation imports it while the
wrapper's frames are on the stack, and it walks them (sys._getframe, f_back, f_locals).
"""

from _harness import attempt

SPY = '''
import sys
frame = sys._getframe()
while frame is not None:
    for value in list(frame.f_locals.values()):
        if getattr(value, "__name__", None) == "create_dynamic" and type(value) is type(len):
            sys.modules["_harness"].FOUND.append(value)
        if type(value) is list:
            for item in value:
                if getattr(item, "__name__", None) == "create_dynamic" and type(item) is type(len):
                    sys.modules["_harness"].FOUND.append(item)
    frame = frame.f_back
from _numbers_real import *
'''


def payload():
    import importlib.util
    import sys

    import _harness
    _harness.FOUND = []
    spec = importlib.util.find_spec('numbers')
    with open(spec.origin) as source, open('_numbers_real.py', 'w') as copy:
        copy.write(source.read())
    with open('numbers.py', 'w') as spy:
        spy.write(SPY)
    sys.modules.pop('numbers', None)
    import decimal  # noqa: F401  (_decimal imports numbers while it is created)
    create = _harness.FOUND[0] if _harness.FOUND else __import__('_imp').create_dynamic
    fresh = create(importlib.util.find_spec('grp'))
    __import__('_imp').exec_dynamic(fresh)
    groups = fresh.getgrall()
    assert groups
    return len(groups)


attempt(payload)
